"""Regression: the REST server took a write whatever its Content-Type, and answered a
page token it never issued as "no such namespace".

- POST bodies sent as text/plain, form data or without a Content-Type were parsed as
  JSON and executed. A browser sends exactly those cross-site without a CORS preflight,
  so any web page could create namespaces and tables, commit, rename and register on a
  server on localhost that has no tokens. Now a body must be declared application/json
  (or an application/*+json type): 415 with the spec's error JSON, nothing changed.
  PyIceberg, DuckDB and Spark send application/json.
- GET .../tables?pageToken=<a token whose name is no valid name> (too long, a lone
  surrogate) answered 404 NoSuchNamespaceException for a namespace that exists (the
  listing's InvalidNameError was read as a missing namespace); a deeply nested token
  answered 400 quoting Python's recursion error. Now both are 400 "is not a token this
  server issued".
"""

from __future__ import annotations

import base64
import json

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

BODY = json.dumps({"namespace": ["web"]}).encode()


@pytest.fixture
def served(tmp_path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns", {})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            yield root, server.url, http
    finally:
        server.stop()


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"],
)
def test_a_body_not_declared_json_is_refused(served, content_type):
    root, _, http = served
    before = Lakehouse.open(root).latest_version()
    headers = {"content-type": content_type} if content_type else {}
    got = http.post("/namespaces", content=BODY, headers=headers)
    assert got.status_code == 415, got.text
    assert got.json()["error"]["code"] == 415
    assert "application/json" in got.json()["error"]["message"]
    assert Lakehouse.open(root).latest_version() == before


def test_json_bodies_still_work(served):
    root, url, http = served
    headers = {"content-type": "application/json; charset=utf-8"}
    assert http.post("/namespaces", content=BODY, headers=headers).status_code == 200
    rest = load_catalog("rest", type="rest", uri=url, prefix="latest")
    rest.create_namespace("other")
    assert sorted(Lakehouse.open(root).list_namespaces()) == ["ns", "other", "web"]


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "token",
    [
        _token(json.dumps({"after": "x" * 5000}).encode()),
        _token(b'{"after": "\\ud800"}'),
        _token(b"[" * 4000),
    ],
    ids=["name-too-long", "lone-surrogate", "nested"],
)
@pytest.mark.parametrize("path", ["/namespaces/ns/tables", "/namespaces/ns/views", "/namespaces"])
def test_a_token_never_issued_is_400(served, token, path):
    _, _, http = served
    got = http.get(path, params={"pageToken": token})
    assert got.status_code == 400, got.text
    error = got.json()["error"]
    assert error["type"] == "BadRequestException"
    assert "not a token this server issued" in error["message"]
