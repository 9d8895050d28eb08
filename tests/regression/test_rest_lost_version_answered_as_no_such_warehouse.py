"""Regression: the REST server answered a catalog version lost from storage (its root
deleted or damaged while older and newer versions are kept) with 404
NoSuchWarehouseException "catalog version 3 is not readable", the answer for a version
that does not exist (beyond the latest, or expired). The Iceberg REST spec's 404 says
the client named something that is not there; a version the catalog should still
serve is a server-side loss: 5XX (InternalServerError) naming the version. A pinned
prefix (`/v1/v/3/...`) and `GET /v1/config?warehouse=v/3` alike; a damaged root under
the config endpoint was also a 404. Found 2026-11-24 (helper adversary2); 4 of 6 fail
on 19421b2 (the guards, a future and an expired version, pass on both).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.format.paths import root_node_file  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402


@pytest.fixture
def lake_root(tmp_path) -> str:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")
    for i in range(4):
        lake.create_table("ns", f"t{i}", {})
    assert lake.latest_version() == 5
    return root


def _get(root: str, url: str) -> httpx.Response:
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            return client.get(url)
    finally:
        server.stop()


def _lose(root: str, version: int) -> None:
    os.remove(os.path.join(root, root_node_file(version)))


@pytest.mark.parametrize("url", ["/v1/v/3/namespaces", "/v1/v/3/namespaces/ns/tables/t0"])
def test_a_lost_version_under_a_pinned_prefix_is_a_server_error(lake_root, url) -> None:
    _lose(lake_root, 3)
    r = _get(lake_root, url)
    assert r.status_code == 500, r.text
    error = r.json()["error"]
    assert error["type"] == "InternalServerError"
    assert "version 3" in error["message"] and "missing" in error["message"]


def test_config_of_a_lost_version_is_a_server_error(lake_root) -> None:
    _lose(lake_root, 3)
    r = _get(lake_root, "/v1/config?warehouse=v/3")
    assert r.status_code == 500, r.text
    assert "version 3" in r.json()["error"]["message"]


def test_config_of_a_damaged_root_is_a_server_error(lake_root) -> None:
    path = os.path.join(lake_root, root_node_file(3))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    r = _get(lake_root, "/v1/config?warehouse=v/3")
    assert r.status_code == 500, r.text
    assert root_node_file(3) in r.json()["error"]["message"]


def test_a_version_beyond_the_latest_is_still_no_such_warehouse(lake_root) -> None:
    for url in ("/v1/v/99/namespaces", "/v1/config?warehouse=v/99"):
        r = _get(lake_root, url)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["type"] == "NoSuchWarehouseException"


def test_an_expired_version_is_still_no_such_warehouse(lake_root) -> None:
    # what an expiration does (FORMAT.md): the oldest marker first, then older roots
    with open(os.path.join(lake_root, "_oldest_version.txt"), "w") as f:
        f.write("3")
    for version in (0, 1, 2):
        _lose(lake_root, version)
    assert Lakehouse.open(lake_root).oldest_version() == 3
    for url in ("/v1/v/1/namespaces", "/v1/config?warehouse=v/1"):
        r = _get(lake_root, url)
        assert r.status_code == 404, r.text
        assert r.json()["error"]["type"] == "NoSuchWarehouseException"
