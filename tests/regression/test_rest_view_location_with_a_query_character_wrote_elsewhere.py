"""A REST view whose location holds `?` or `#` (its own name by default: view `q?`, `#`,
or an explicit location) was accepted: PyArrow reads the rest as a URL query or
fragment, so `.../ns/q?/metadata/00000-....json` was written as the FILE `.../ns/q` and
the view committed pointing at a path that holds nothing; the next such name in the
namespace (`q?x`, `#`) was a 500 FileExistsError or IsADirectoryError. Tables refused
these locations already (403, TrinityCatalog.check_location). Now views get the same
403 ForbiddenException and nothing is written."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest

SCHEMA = {"type": "struct", "schema-id": 0, "fields": []}
VIEW_VERSION = {
    "version-id": 1,
    "timestamp-ms": 1,
    "schema-id": 0,
    "summary": {},
    "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
    "default-namespace": ["ns"],
}


def test_view_names_and_locations_with_query_characters(tmp_path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            for name, location in [
                ("q?", None),
                ("q?x", None),
                ("#", None),
                ("a#b", None),
                ("ok", f"file://{root}/warehouse/ns/ok?x"),
            ]:
                body = {"name": name, "schema": SCHEMA, "view-version": VIEW_VERSION}
                if location:
                    body["location"] = location
                r = http.post("/v1/latest/namespaces/ns/views", json=body)
                assert r.status_code == 403, (name, r.text)
                assert r.json()["error"]["type"] == "ForbiddenException"
        assert Lakehouse.open(root).list_views("ns") == []
        assert not os.path.exists(os.path.join(root, "warehouse", "ns"))
    finally:
        server.stop()
