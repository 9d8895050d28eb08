"""Removing a table property that is not set over REST was answered 500
InternalServerError with a KeyError traceback: the server applies the update with
PyIceberg's metadata update, which pops every key. Java clients send such removals
(Spark's `ALTER TABLE ... UNSET TBLPROPERTIES IF EXISTS`, Iceberg's
`updateProperties().remove(k)`), and Iceberg's Java metadata builder, like this
server's own view updates, removes what is there. (PyIceberg applies a commit locally
first, so its client raises that KeyError before sending.) Now a key that is not set is
nothing to remove: the others are removed, and a commit that removes nothing writes no
new metadata and no catalog version."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "a", "type": "long", "required": False}],
}
T = "/v1/latest/namespaces/ns/tables/t"


def _remove(http, *keys):
    update = {"action": "remove-properties", "removals": list(keys)}
    return http.post(T, json={"requirements": [], "updates": [update]})


def test_removing_properties_that_are_not_set(tmp_path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            body = {"name": "t", "schema": SCHEMA, "properties": {"a": "1", "b": "2"}}
            assert http.post("/v1/latest/namespaces/ns/tables", json=body).status_code == 200
            before = Lakehouse.open(root).latest_version()
            location = http.get(T).json()["metadata-location"]
            r = _remove(http, "absent")
            assert r.status_code == 200, r.text
            assert r.json()["metadata-location"] == location
            assert Lakehouse.open(root).latest_version() == before
            r = _remove(http, "absent", "a", "a")
            assert r.status_code == 200, r.text
            props = http.get(T).json()["metadata"]["properties"]
            assert "a" not in props and props["b"] == "2"
            assert Lakehouse.open(root).latest_version() == before + 1
    finally:
        server.stop()
