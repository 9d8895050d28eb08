"""PyIceberg's RestCatalog against `python -m trinityfs.rest` on 127.0.0.1: namespaces,
tables (create, append, scan, schema evolution, staged create, register, rename, drop),
time travel through the warehouse, and multi-table transactions over raw HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    ForbiddenError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.types import LongType, StringType

from trinityfs import Lakehouse

pytestmark = pytest.mark.rest

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {"id": list(range(start, start + n)), "name": [f"r{i}" for i in range(start, start + n)]},
        schema=SCHEMA,
    )


def trinityfs_log(root: str) -> list[dict[str, Any]]:
    """`trinityfs --json log` of the lakehouse, newest first."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "trinityfs.cli", "--root", root, "--json", "log"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# -- namespaces -------------------------------------------------------------------------


def test_namespaces_create_load_update_list_drop(rest_catalog):
    cat = rest_catalog()
    cat.create_namespace("sales", {"owner": "analytics"})
    cat.create_namespace("hr")
    assert sorted(cat.list_namespaces()) == [("hr",), ("sales",)]
    assert cat.load_namespace_properties("sales") == {"owner": "analytics"}
    assert cat.namespace_exists("sales") and not cat.namespace_exists("nope")
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("sales")
    summary = cat.update_namespace_properties(
        "sales", removals={"owner", "gone"}, updates={"a": "1"}
    )
    assert summary.updated == ["a"] and summary.removed == ["owner"] and summary.missing == ["gone"]
    assert cat.load_namespace_properties("sales") == {"a": "1"}
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties("nope")
    with pytest.raises(NoSuchNamespaceError):
        cat.list_tables("nope")
    cat.drop_namespace("hr")
    with pytest.raises(NoSuchNamespaceError):
        cat.drop_namespace("hr")
    assert cat.list_namespaces() == [("sales",)]
    assert cat.list_namespaces("sales") == []


def test_drop_namespace_with_tables_is_409(rest_catalog):
    cat = rest_catalog()
    cat.create_namespace("sales")
    cat.create_table("sales.orders", SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace("sales")


def test_pagination_lists_everything_once(rest_catalog, http):
    cat = rest_catalog(**{"rest-page-size": "3"})
    for i in range(7):
        cat.create_namespace(f"ns{i}")
    cat.create_namespace("many")
    for i in range(8):
        cat.create_table(f"many.t{i}", SCHEMA)
    assert len(cat.list_namespaces()) == 8
    assert sorted(cat.list_tables("many")) == [("many", f"t{i}") for i in range(8)]
    # the protocol itself: an empty pageToken starts pages of pageSize
    seen, token, pages = [], "", 0
    while True:
        r = http.get(
            "/v1/latest/namespaces/many/tables", params={"pageToken": token, "pageSize": 3}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        seen += [i["name"] for i in body["identifiers"]]
        pages += 1
        token = body["next-page-token"]
        if token is None:
            break
    assert pages == 3 and seen == [f"t{i}" for i in range(8)]
    r = http.get("/v1/latest/namespaces", params={"pageToken": "not-a-token!"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "BadRequestException"


# -- tables -----------------------------------------------------------------------------


def test_create_append_scan_and_evolve(rest_catalog, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    table = cat.create_table("sales.orders", SCHEMA, properties={"owner": "me"})
    assert table.metadata.location.startswith("file://")
    assert "/warehouse/sales/orders" in table.metadata.location
    table.append(rows(3))
    table.append(rows(2, start=3))
    loaded = cat.load_table("sales.orders")
    assert sorted(loaded.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3, 4]
    assert len(loaded.metadata.snapshots) == 2
    with loaded.update_schema() as update:
        update.add_column("qty", LongType())
        update.rename_column("name", "label")
    evolved = cat.load_table("sales.orders")
    assert [f.name for f in evolved.schema().fields] == ["id", "label", "qty"]
    evolved.append(
        pa.table(
            {"id": [9], "label": ["x"], "qty": [4]},
            schema=pa.schema([("id", pa.int64()), ("label", pa.string()), ("qty", pa.int64())]),
        )
    )
    scanned = cat.load_table("sales.orders").scan().to_arrow()
    assert scanned.num_rows == 6 and scanned.column_names == ["id", "label", "qty"]
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table("sales.orders", SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        cat.create_table("nope.orders", SCHEMA)
    with pytest.raises(NoSuchTableError):
        cat.load_table("sales.nope")
    assert cat.table_exists("sales.orders") and not cat.table_exists("sales.nope")
    # the TrinityLake catalog records every change as a version
    changes = [c for v in trinityfs_log(lake_root) for c in v["changes"]]
    assert {"action": "created", "kind": "table", "name": "orders", "namespace": "sales"} in changes


def test_stale_commit_is_409_and_nothing_is_lost(rest_catalog, http):
    cat = rest_catalog()
    cat.create_namespace("sales")
    cat.create_table("sales.orders", SCHEMA)
    first = cat.load_table("sales.orders")
    second = cat.load_table("sales.orders")
    stale = _staged_append(second, rows(1, start=20))
    first.append(rows(1))
    # the raw protocol: a commit whose requirement no longer holds is 409 CommitFailed
    r = http.post("/v1/latest/namespaces/sales/tables/orders", json=stale)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["type"] == "CommitFailedException"
    # PyIceberg retries a 409 on fresh metadata: both appends are kept
    second.append(rows(1, start=10))
    # a schema change from stale metadata does not conflict with an append (Iceberg rules)
    with second.update_schema() as update:
        update.add_column("late", StringType())
    final = cat.load_table("sales.orders")
    assert sorted(final.scan().to_arrow()["id"].to_pylist()) == [0, 10]
    assert "late" in [f.name for f in final.schema().fields]


def test_staged_create_lands_only_on_commit(rest_catalog):
    cat = rest_catalog()
    cat.create_namespace("sales")
    txn = cat.create_table_transaction("sales.staged", SCHEMA)
    assert not cat.table_exists("sales.staged")
    txn.append(rows(4))
    assert not cat.table_exists("sales.staged")
    txn.commit_transaction()
    table = cat.load_table("sales.staged")
    assert table.scan().to_arrow().num_rows == 4
    assert "/warehouse/sales/staged" in table.metadata.location
    # a second staged create of the same name fails on commit (assert-create)
    other = cat.create_table_transaction("sales.other", SCHEMA)
    cat.create_table("sales.other", SCHEMA)
    with pytest.raises(CommitFailedException):
        other.commit_transaction()


def test_rename_register_and_drop(rest_catalog, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    cat.create_namespace("archive")
    table = cat.create_table("sales.orders", SCHEMA)
    table.append(rows(2))
    renamed = cat.rename_table("sales.orders", "archive.orders_2025")
    assert renamed.scan().to_arrow().num_rows == 2
    assert not cat.table_exists("sales.orders")
    with pytest.raises(NoSuchTableError):
        cat.rename_table("sales.orders", "archive.x")
    with pytest.raises(NoSuchNamespaceError):
        cat.rename_table("archive.orders_2025", "nope.x")
    cat.create_table("sales.other", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        cat.rename_table("sales.other", "archive.orders_2025")
    # register the same metadata file under a second name
    location = cat.load_table("archive.orders_2025").metadata_location
    registered = cat.register_table("sales.copy", location)
    assert registered.scan().to_arrow().num_rows == 2
    with pytest.raises(TableAlreadyExistsError):
        cat.register_table("sales.copy", location)
    before_drop = Lakehouse.open(lake_root).latest_version()
    cat.purge_table("sales.copy")
    assert not cat.table_exists("sales.copy")
    with pytest.raises(NoSuchTableError):
        cat.drop_table("sales.copy")
    # purge never breaks older catalog versions: the table still reads there
    old = rest_catalog(warehouse=f"v/{before_drop}")
    assert old.load_table("sales.copy").scan().to_arrow().num_rows == 2


# -- time travel ------------------------------------------------------------------------


def test_warehouse_selects_a_catalog_version_read_only(rest_catalog, lake_root, http):
    cat = rest_catalog()
    cat.create_namespace("sales")
    table = cat.create_table("sales.orders", SCHEMA)
    table.append(rows(2))
    lake = Lakehouse.open(lake_root)
    v_two_rows = lake.latest_version()
    created_at = lake.version_info(v_two_rows).created_at_millis
    cat.load_table("sales.orders").append(rows(3, start=2))
    cat.create_table("sales.later", SCHEMA)

    old = rest_catalog(warehouse=f"v/{v_two_rows}")
    assert old.properties["prefix"] == f"v/{v_two_rows}"
    assert old.load_table("sales.orders").scan().to_arrow().num_rows == 2
    assert not old.table_exists("sales.later")
    assert cat.load_table("sales.orders").scan().to_arrow().num_rows == 5
    with pytest.raises(ForbiddenError, match="read-only"):
        old.create_namespace("x")
    with pytest.raises(ForbiddenError, match="read-only"):
        old.drop_table("sales.orders")
    with pytest.raises(ForbiddenError, match="read-only"):
        old.load_table("sales.orders").append(rows(1))

    # an ISO time is fixed to the version it names when the client connects
    from datetime import UTC, datetime

    iso = datetime.fromtimestamp(created_at / 1000, UTC).isoformat().replace("+00:00", "Z")
    at_time = rest_catalog(warehouse=f"v/{iso}")
    assert at_time.properties["prefix"] == f"v/{v_two_rows}"
    assert at_time.load_table("sales.orders").scan().to_arrow().num_rows == 2

    # an export name
    lake.export("before-more", v_two_rows)
    exported = rest_catalog(warehouse="v/before-more")
    assert exported.load_table("sales.orders").scan().to_arrow().num_rows == 2

    # unknown versions and words are 404 NoSuchWarehouse, with the grammar in the message
    for bad in ("v/999", "v/no-such-export", "elsewhere"):
        r = http.get("/v1/config", params={"warehouse": bad})
        assert r.status_code == 404, (bad, r.text)
        assert r.json()["error"]["type"] == "NoSuchWarehouseException"
    r = http.get("/v1/v/999/namespaces")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchWarehouseException"
    # the prefix works with its slash encoded too
    r = http.get(f"/v1/v%2F{v_two_rows}/namespaces/sales/tables")
    assert r.status_code == 200 and [i["name"] for i in r.json()["identifiers"]] == ["orders"]


# -- multi-table transactions -----------------------------------------------------------


def _commit_body(table: Any, updates: list[Any], requirements: list[Any]) -> dict[str, Any]:
    from pyiceberg.table import CommitTableRequest, TableIdentifier

    ns, name = table.name()
    request = CommitTableRequest(
        identifier=TableIdentifier(namespace=[ns], name=name),
        requirements=tuple(requirements),
        updates=tuple(updates),
    )
    return json.loads(request.model_dump_json())


def _staged_append(table: Any, data: pa.Table) -> dict[str, Any]:
    """The commit body of an append, made by PyIceberg but not sent."""
    txn = table.transaction()
    txn.append(data)
    return _commit_body(table, list(txn._updates), list(txn._requirements))


def test_multi_table_transaction_is_one_catalog_version(rest_catalog, http, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    orders = cat.create_table("sales.orders", SCHEMA)
    totals = cat.create_table("sales.totals", SCHEMA)
    before = Lakehouse.open(lake_root).latest_version()

    body = {
        "table-changes": [
            _staged_append(orders, rows(3)),
            _staged_append(totals, rows(1, start=100)),
        ]
    }
    r = http.post("/v1/latest/transactions/commit", json=body)
    assert r.status_code == 204, r.text

    log = trinityfs_log(lake_root)
    assert log[0]["version"] == before + 1
    assert sorted(c["name"] for c in log[0]["changes"]) == ["orders", "totals"]
    assert all(c["action"] == "replaced" for c in log[0]["changes"])
    assert cat.load_table("sales.orders").scan().to_arrow().num_rows == 3
    assert cat.load_table("sales.totals").scan().to_arrow().num_rows == 1
    # a reader at the previous version sees neither change
    old = rest_catalog(warehouse=f"v/{before}")
    assert old.load_table("sales.orders").scan().to_arrow().num_rows == 0
    assert old.load_table("sales.totals").scan().to_arrow().num_rows == 0


def test_multi_table_transaction_with_a_stale_table_lands_nothing(rest_catalog, http, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    orders = cat.create_table("sales.orders", SCHEMA)
    totals = cat.create_table("sales.totals", SCHEMA)
    stale = _staged_append(totals, rows(1))
    cat.load_table("sales.totals").append(rows(5))  # totals moves on
    before = Lakehouse.open(lake_root).latest_version()
    body = {"table-changes": [_staged_append(orders, rows(3)), stale]}
    r = http.post("/v1/latest/transactions/commit", json=body)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["type"] == "CommitFailedException"
    assert Lakehouse.open(lake_root).latest_version() == before
    assert cat.load_table("sales.orders").scan().to_arrow().num_rows == 0
    assert cat.load_table("sales.totals").scan().to_arrow().num_rows == 5
    # a missing table is 404 and also lands nothing
    body = {
        "table-changes": [
            _staged_append(cat.load_table("sales.orders"), rows(1)),
            {
                "identifier": {"namespace": ["sales"], "name": "ghost"},
                "requirements": [],
                "updates": [],
            },
        ]
    }
    r = http.post("/v1/latest/transactions/commit", json=body)
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchTableException"
    assert Lakehouse.open(lake_root).latest_version() == before


@pytest.mark.parametrize("cli", [True, False], ids=["trinityfs-serve", "python-m-trinityfs.rest"])
def test_served_by_a_real_process(start_server, lake_root, cli):
    from pyiceberg.catalog.rest import RestCatalog

    server = start_server(lake_root, cli=cli)
    cat = RestCatalog("lake", uri=server.url)
    cat.create_namespace("sales")
    cat.create_table("sales.orders", SCHEMA).append(rows(2))
    assert cat.load_table("sales.orders").scan().to_arrow().num_rows == 2
    server.stop()
    assert server.proc.returncode is not None
