"""Regression: the Iceberg front ends listed and dropped objects they say do not exist.

A TrinityLake table that is not an Iceberg table (table_format DELTA, or no
metadata_location) is 404 to REST HEAD/GET and NoSuchTableError to
TrinityCatalog.load_table/table_exists (since 187bd6c), yet:
- TrinityCatalog.list_tables, REST GET .../tables (so RestCatalog.list_tables, DuckDB's
  SHOW ALL TABLES, Spark's catalog listing) listed it;
- TrinityCatalog.drop_table/purge_table and REST DELETE .../tables/{t} dropped it (204):
  a Delta table deleted from the catalog through an Iceberg client that cannot load it;
- the same for views: list_views listed a TrinityLake view that is not an Iceberg view,
  REST DELETE .../views/{v} answered 204 and dropped it while HEAD and GET said 404.

Now one rule (trinityfs/iceberg/objects.py) decides what an Iceberg table or view is for
every Iceberg front end: it is not listed, a drop of it is NoSuchTableError /
NoSuchViewError (404 with the spec's error JSON), and nothing changes (no new catalog
version). REST paging skips such objects and still returns full pages.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.exceptions import NoSuchTableError, NoSuchViewError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
VIEW = {
    "name": "iv",
    "schema": {"type": "struct", "schema-id": 0, "fields": []},
    "view-version": {
        "version-id": 1,
        "timestamp-ms": 0,
        "schema-id": 0,
        "summary": {},
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
        "default-namespace": ["ns"],
    },
}


@pytest.fixture
def served(tmp_path):
    """ns holds Iceberg tables a_ice, c_ice, e_ice, the non-Iceberg tables b_delta and
    d_plain, the Iceberg view iv and the plain TrinityLake view sql."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "b_delta", {"table_format": "DELTA"})
    lake.create_table("ns", "d_plain", {})
    lake.create_view("ns", "sql", {})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        rest = load_catalog("rest", type="rest", uri=server.url, prefix="latest")
        for name in ("a_ice", "c_ice", "e_ice"):
            rest.create_table(("ns", name), SCHEMA)
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            assert http.post("/namespaces/ns/views", json=VIEW).status_code == 200
            yield root, rest, http
    finally:
        server.stop()


def trinity(root: str):
    return load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )


ICEBERG_TABLES = [("ns", "a_ice"), ("ns", "c_ice"), ("ns", "e_ice")]


def test_lists_show_only_iceberg_objects(served):
    root, rest, http = served
    for catalog in (trinity(root), rest):
        assert sorted(catalog.list_tables("ns")) == ICEBERG_TABLES
        assert catalog.list_views("ns") == [("ns", "iv")]
    names = [i["name"] for i in http.get("/namespaces/ns/tables").json()["identifiers"]]
    assert names == ["a_ice", "c_ice", "e_ice"]


def test_rest_pages_skip_non_iceberg_tables(served):
    _, _, http = served
    seen, token = [], ""  # an empty pageToken starts a paginated listing
    for _ in range(10):
        params = {"pageSize": "1", "pageToken": token}
        body = http.get("/namespaces/ns/tables", params=params).json()
        seen += [i["name"] for i in body["identifiers"]]
        assert len(body["identifiers"]) <= 1
        token = body.get("next-page-token")
        if not token:
            break
    assert seen == ["a_ice", "c_ice", "e_ice"]
    body = http.get("/namespaces/ns/tables", params={"pageSize": "2", "pageToken": ""}).json()
    assert [i["name"] for i in body["identifiers"]] == ["a_ice", "c_ice"]
    assert body["next-page-token"]


@pytest.mark.parametrize("path", ["tables/b_delta", "tables/d_plain", "views/sql"])
@pytest.mark.parametrize("query", ["", "?purgeRequested=true"])
def test_rest_delete_of_a_non_iceberg_object_is_404(served, path, query):
    root, _, http = served
    before = Lakehouse.open(root).latest_version()
    got = http.delete(f"/namespaces/ns/{path}{query}")
    assert got.status_code == 404, got.text
    error = got.json()["error"]
    kind = "NoSuchViewException" if path.startswith("views") else "NoSuchTableException"
    assert error["type"] == kind and error["code"] == 404 and error["message"]
    assert Lakehouse.open(root).latest_version() == before


def test_catalog_drops_refuse_non_iceberg_objects(served):
    root, rest, _ = served
    before = Lakehouse.open(root).latest_version()
    for catalog in (trinity(root), rest):
        for name in ("b_delta", "d_plain"):
            with pytest.raises(NoSuchTableError):
                catalog.drop_table(("ns", name))
            with pytest.raises(NoSuchTableError):
                catalog.purge_table(("ns", name))
        with pytest.raises(NoSuchViewError):
            catalog.drop_view(("ns", "sql"))
    lake = Lakehouse.open(root)
    assert lake.latest_version() == before
    assert lake.describe_table("ns", "b_delta").table_format == "DELTA"
    assert lake.snapshot().object_kind("ns", "sql") == "view"


def test_iceberg_objects_still_drop(served):
    root, rest, http = served
    trinity(root).drop_table(("ns", "a_ice"))
    rest.drop_table(("ns", "c_ice"))
    assert http.delete("/namespaces/ns/views/iv").status_code == 204
    assert sorted(rest.list_tables("ns")) == [("ns", "e_ice")]
    assert rest.list_views("ns") == []


def test_rest_rename_of_a_non_iceberg_view_is_404(served):
    root, _, http = served
    before = Lakehouse.open(root).latest_version()
    body = {"source": {"namespace": ["ns"], "name": "sql"}}
    body["destination"] = {"namespace": ["ns"], "name": "sql2"}
    got = http.post("/views/rename", json=body)
    assert got.status_code == 404, got.text
    assert got.json()["error"]["type"] == "NoSuchViewException"
    assert Lakehouse.open(root).latest_version() == before
