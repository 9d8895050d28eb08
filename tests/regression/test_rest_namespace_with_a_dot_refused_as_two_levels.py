"""Regression: a namespace whose name holds a dot (valid in TrinityLake: `a.b` is one
namespace) was listed and read over REST as ["a.b"], but every write to it, and
creating one, answered 400 "namespace 'a.b' has 2 levels": the server passed the
namespace on to the PyIceberg catalog as a string, which splits on dots. The spec's
JSON ["a.b"] and the path parameter `a.b` (levels are separated by %1F) are one level.
Found 2026-11-24 (helper adversary); fails on e0c4099.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}


@pytest.fixture
def client(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("a.b", {"k": "v", "location": f"{root}/warehouse/ab"})
    lake.create_table("a.b", "t", {})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            yield http, root
    finally:
        server.stop()


def test_writes_to_a_namespace_with_a_dot(client):
    http, root = client
    r = http.post("/namespaces/a.b/properties", json={"updates": {"k2": "v2"}})
    assert r.status_code == 200, r.text
    assert Lakehouse.open(root).describe_namespace("a.b").properties["k2"] == "v2"
    r = http.post("/namespaces/a.b/tables", json={"name": "new", "schema": SCHEMA})
    assert r.status_code == 200, r.text
    assert "new" in Lakehouse.open(root).list_tables("a.b")
    assert http.delete("/namespaces/a.b/tables/new").status_code == 204
    # t is no Iceberg table (no metadata_location): 404, dropped through the catalog
    assert http.delete("/namespaces/a.b/tables/t").status_code == 404
    Lakehouse.open(root).drop_table("a.b", "t")
    r = http.delete("/namespaces/a.b")
    assert r.status_code == 204, r.text
    assert "a.b" not in Lakehouse.open(root).list_namespaces()


def test_creating_a_namespace_with_a_dot(client):
    http, root = client
    r = http.post("/namespaces", json={"namespace": ["c.d"], "properties": {"x": "1"}})
    assert r.status_code == 200, r.text
    assert r.json()["namespace"] == ["c.d"]
    assert Lakehouse.open(root).describe_namespace("c.d").properties == {"x": "1"}
    assert http.get("/namespaces/c.d").json()["namespace"] == ["c.d"]
    r = http.post("/namespaces/c.d/tables", json={"name": "t", "schema": SCHEMA})
    assert r.status_code == 200, r.text  # the default location: <warehouse>/c.d/t
    assert r.json()["metadata"]["location"].endswith("/warehouse/c.d/t")


def test_pyiceberg_catalog_creates_a_table_in_a_namespace_with_a_dot(client):
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    _, root = client
    impl = "trinityfs.iceberg.TrinityCatalog"
    catalog = load_catalog("lake", **{"py-catalog-impl": impl, "root": root})
    catalog.create_namespace(("e.f",))
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table(("e.f", "t"), schema)
    assert table.metadata.location.endswith("/warehouse/e.f/t")
    assert catalog.list_namespaces(("e.f",)) == []


def test_two_levels_are_still_refused(client):
    http, _ = client
    r = http.post("/namespaces", json={"namespace": ["c", "d"]})
    assert r.status_code == 400 and "2 levels" in r.text
    assert http.delete("/namespaces/a%1Fb").status_code == 400
