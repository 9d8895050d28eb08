"""fsck: a healthy lakehouse passes; damage is found and named; orphans are listed."""

from __future__ import annotations

import json

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import NO_FSYNC, SMALL_TREE, make_history

from trinityfs import Lakehouse
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION, root_node_file
from trinityfs.lifecycle.inventory import classify


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 40, tables=25)
    lake.create_view("ns", "v", {"properties": {"sql": "select 1"}})
    lake.export("m", version=10)
    lake.export("p", version=20, mode="partial", depth=1)
    lake.export("f", version=30, mode="full")
    txn = lake.begin_distributed()
    txn.create_table("ns", "pending")
    txn.save()
    return lake


def _a_node(lake: Lakehouse, version: int | None = None) -> str:
    """A non-root node of a version's tree."""
    version = lake.latest_version() if version is None else version
    loc = root_node_file(version)
    return decode_node(lake.storage.read(loc), None, loc).children[0]


def _a_definition(lake: Lakehouse, kind: str = "table") -> str:
    view = lake.snapshot()
    return next(loc for ref, loc in view.iter_all() if ref.kind == kind)


def test_healthy(lake) -> None:
    report = lake.fsck()
    assert report.ok and report.exit_status == 0, report.errors
    assert report.versions_checked == lake.latest_version() + 1
    assert report.exports_checked == ["f", "m", "p"]
    assert [t["state"] for t in report.transactions] == ["live"]
    assert report.nodes_checked > 10 and report.definitions_checked > 25
    assert not report.orphans and not report.unknown_files and not report.warnings
    data = json.loads(json.dumps(report.to_dict()))  # machine-readable
    assert data["ok"] is True and data["errors"] == []


def test_after_expiration(lake) -> None:
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=3, grace_millis=0)
    report = lake.fsck()
    assert report.ok, report.errors
    assert report.versions_checked == 3
    assert not report.orphans


def test_orphans_listed_with_sizes(lake) -> None:
    storage = lake.storage
    live_node = _a_node(lake, 5)  # copied under a name nothing points to
    orphan_node = _optimized("node-5e1f2b7c-0000-4000-8000-000000000000.arrow")
    storage.write(orphan_node, storage.read(live_node))
    orphan_def = _optimized("table-ns-gone-5e1f2b7c-0000-4000-8000-000000000001.binpb")
    storage.write(orphan_def, b"")
    storage.write("_export_unrecorded.arrow", storage.read(root_node_file(3)))
    storage.write("warehouse/t/data.parquet", b"PAR1")
    report = lake.fsck()
    assert report.ok, "orphans do not make a lakehouse unhealthy"
    orphans = {f.location: f for f in report.orphans}
    assert set(orphans) == {orphan_node, orphan_def, "_export_unrecorded.arrow"}
    assert orphans[orphan_node].size == len(storage.read(live_node))
    assert orphans[orphan_node].kind == "node" and orphans[orphan_def].kind == "definition"
    assert report.orphan_bytes == sum(f.size for f in report.orphans)
    assert [f.location for f in report.unknown_files] == ["warehouse/t/data.parquet"]
    assert report.to_dict()["orphans"][0]["size"] >= 0


def _optimized(name: str) -> str:
    from trinityfs.format.paths import optimized_path

    location = optimized_path(name)
    assert classify(location) != "unknown"
    return location


def test_deleted_node_file(lake) -> None:
    node = _a_node(lake)
    lake.storage.delete(node)
    report = lake.fsck()
    assert not report.ok and report.exit_status == 1
    missing = [e for e in report.errors if e.kind == "missing"]
    assert [e.location for e in missing] == [node]
    assert any(e.kind == "tree" and node in e.message for e in report.errors)
    assert json.loads(json.dumps(report.to_dict()))["ok"] is False


def test_corrupt_definition(lake) -> None:
    location = _a_definition(lake)
    lake.storage.write(location, b"\xff\xff\xff garbage that is not a TableDef")
    report = lake.fsck()
    assert not report.ok
    [error] = report.errors
    assert error.kind == "corrupt" and error.location == location
    assert "TableDef" in error.message


def test_corrupt_node_and_missing_definition(lake) -> None:
    node = _a_node(lake)
    lake.storage.write(node, b"not an arrow file")
    definition = _a_definition(lake, "view")
    lake.storage.delete(definition)
    report = lake.fsck()
    assert {(e.kind, e.location) for e in report.errors} >= {
        ("corrupt", node),
        ("missing", definition),
    }


def test_missing_version_in_the_middle(lake) -> None:
    lake.storage.delete(root_node_file(7))
    report = lake.fsck()
    assert not report.ok
    errors = {
        (e.version, e.message.split(":")[0])
        for e in report.errors
        if e.location == root_node_file(7)
    }
    assert errors == {
        (7, "root of version 7 is missing"),
        (8, "previous_root of version 8 is missing"),
    }


def test_damaged_exports(lake) -> None:
    # a file inside the full export, and the root copy of the minimal one
    export_dir = lake.storage.child("_exports/f")
    victim = next(e.location for e in export_dir.list("") if classify(e.location) == "node")
    export_dir.delete(victim)
    lake.storage.delete("_export_m.arrow")
    report = lake.fsck()
    assert not report.ok
    locations = {e.location for e in report.errors}
    assert f"_exports/f/{victim}" in locations
    assert "_export_m.arrow" in locations


def test_bad_markers_and_unreadable_transaction(lake) -> None:
    lake.storage.write(OLDEST_VERSION, b"banana")
    lake.storage.write(LATEST_HINT, b"12x")
    txn = next(e.location for e in lake.storage.list("") if classify(e.location) == "transaction")
    lake.storage.write(txn, b"\xff\xff\xff")
    report = lake.fsck()
    kinds = {(p.kind, p.location) for p in report.errors}
    assert ("marker", OLDEST_VERSION) in kinds and ("transaction", txn) in kinds
    assert ("marker", LATEST_HINT) in {(p.kind, p.location) for p in report.warnings}
