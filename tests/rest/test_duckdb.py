"""DuckDB 1.4.4 with its iceberg, httpfs and avro extensions (the pip packages
duckdb-ext-*, loaded from their extension directory, never downloaded) against the REST
server: ATTACH, SELECT at the latest and at an old catalog version, INSERT."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pytest

from trinityfs import Lakehouse

pytestmark = pytest.mark.rest

duckdb = pytest.importorskip("duckdb")
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def extension_directory() -> str:
    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the duckdb-ext-iceberg/httpfs/avro packages are not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "extensions"
    version = f"v{duckdb.__version__}"
    if not (path / version).is_dir():
        pytest.skip(f"the duckdb-ext packages have no extensions for DuckDB {version}")
    return str(path)


@pytest.fixture
def duck():
    con = duckdb.connect(
        config={"extension_directory": extension_directory(), "autoinstall_known_extensions": False}
    )
    con.execute("LOAD iceberg")
    yield con
    con.close()


def attach(con, url: str, alias: str, warehouse: str = "latest", token: str | None = None) -> None:
    auth = f"TOKEN '{token}'" if token else "AUTHORIZATION_TYPE 'none'"
    con.execute(f"ATTACH '{warehouse}' AS {alias} (TYPE iceberg, ENDPOINT '{url}', {auth})")


def test_duckdb_reads_latest_and_old_versions_and_inserts(duck, server, rest_catalog, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    table = cat.create_table("sales.orders", SCHEMA)
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"]}, schema=SCHEMA))
    v_two = Lakehouse.open(lake_root).latest_version()
    cat.load_table("sales.orders").append(pa.table({"id": [3], "name": ["c"]}, schema=SCHEMA))

    attach(duck, server.url, "lake")
    attach(duck, server.url, "lake_old", warehouse=f"v/{v_two}")
    assert duck.execute("SELECT count(*) FROM lake.sales.orders").fetchone() == (3,)
    assert duck.execute("SELECT sum(id) FROM lake_old.sales.orders").fetchone() == (3,)
    tables = duck.execute("SELECT database, schema, name FROM (SHOW ALL TABLES)").fetchall()
    assert ("lake", "sales", "orders") in tables and ("lake_old", "sales", "orders") in tables

    # INSERT through DuckDB commits through the server; PyIceberg sees it
    before = Lakehouse.open(lake_root).latest_version()
    duck.execute("INSERT INTO lake.sales.orders VALUES (4, 'd'), (5, 'e')")
    assert Lakehouse.open(lake_root).latest_version() == before + 1
    got = cat.load_table("sales.orders").scan().to_arrow()
    assert sorted(got["id"].to_pylist()) == [1, 2, 3, 4, 5]
    assert duck.execute("SELECT count(*) FROM lake.sales.orders").fetchone() == (5,)
    # the old version is unchanged and read-only
    assert duck.execute("SELECT count(*) FROM lake_old.sales.orders").fetchone() == (2,)
    with pytest.raises(duckdb.Error, match=r"read-only|403|Forbidden"):
        duck.execute("INSERT INTO lake_old.sales.orders VALUES (9, 'z')")
    assert Lakehouse.open(lake_root).latest_version() == before + 1


def test_duckdb_with_a_bearer_token(duck, start_thread, lake_root, tmp_path):
    from pyiceberg.catalog.rest import RestCatalog

    token = "duck-0123456789abcdef01"
    tokens = tmp_path / "tokens"
    tokens.write_text(f"read-only {token}\nread-write rw-0123456789abcdef0123\n")
    tokens.chmod(0o600)
    server = start_thread(lake_root, tokens_file=str(tokens))
    writer = RestCatalog("w", uri=server.url, token="rw-0123456789abcdef0123")
    writer.create_namespace("sales")
    writer.create_table("sales.orders", SCHEMA).append(
        pa.table({"id": [7], "name": ["x"]}, schema=SCHEMA)
    )
    attach(duck, server.url, "lake", token=token)
    assert duck.execute("SELECT id FROM lake.sales.orders").fetchall() == [(7,)]
    with pytest.raises(duckdb.Error):
        duck.execute("INSERT INTO lake.sales.orders VALUES (8, 'y')")
    with pytest.raises(duckdb.Error):
        attach(duck, server.url, "nope", token="wrong-token-000000000000")


def test_duckdb_ddl_update_delete_through_the_server(duck, server, rest_catalog, lake_root):
    cat = rest_catalog()
    attach(duck, server.url, "lake")
    duck.execute("CREATE SCHEMA lake.hr")
    duck.execute("CREATE TABLE lake.hr.people (id BIGINT, name VARCHAR)")
    duck.execute("INSERT INTO lake.hr.people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')")
    duck.execute("UPDATE lake.hr.people SET name = 'BOB' WHERE id = 2")
    duck.execute("DELETE FROM lake.hr.people WHERE id = 3")
    assert duck.execute("SELECT * FROM lake.hr.people ORDER BY id").fetchall() == [
        (1, "ann"),
        (2, "BOB"),
    ]
    # PyIceberg (another client) reads what DuckDB committed, deletes applied
    got = cat.load_table("hr.people").scan().to_arrow().sort_by("id")
    assert got.to_pydict() == {"id": [1, 2], "name": ["ann", "BOB"]}
    # every DuckDB statement was its own catalog version
    lake = Lakehouse.open(lake_root)
    changed = [c.object.name for v in range(1, lake.latest_version() + 1) for c in lake.changes(v)]
    assert changed.count("people") >= 4  # create, insert, update, delete
    duck.execute("DROP TABLE lake.hr.people")
    assert not cat.table_exists("hr.people")


def test_duckdb_does_not_list_a_table_it_cannot_select(duck, server, rest_catalog, lake_root):
    """Regression: a TrinityLake table of another format (DELTA) was listed by SHOW ALL
    TABLES over REST although every SELECT of it failed (404). Fails on 30f7176."""
    cat = rest_catalog()
    cat.create_namespace("sales")
    cat.create_table("sales.orders", SCHEMA)
    Lakehouse.open(lake_root).create_table("sales", "events", {"table_format": "DELTA"})
    attach(duck, server.url, "lake")
    tables = duck.execute("SELECT database, schema, name FROM (SHOW ALL TABLES)").fetchall()
    assert [t for t in tables if t[0] == "lake"] == [("lake", "sales", "orders")]
    with pytest.raises(duckdb.Error):
        duck.execute("SELECT count(*) FROM lake.sales.events")
