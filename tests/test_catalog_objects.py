"""Tables and views through the catalog API."""

from __future__ import annotations

import pytest

from trinityfs.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NamespaceNotFoundError,
    ObjectNotFoundError,
)
from trinityfs.format.trinitylake_pb2 import TableDef


@pytest.fixture
def ns_lake(lake):
    lake.create_namespace("ns")
    lake.create_namespace("other")
    return lake


def test_create_describe_list(ns_lake) -> None:
    lake = ns_lake
    lake.create_table("ns", "t2", {"table_format": "ICEBERG", "properties": {"k": "v"}})
    lake.create_table("ns", "t1", TableDef(table_type="MANAGED"))
    lake.create_view("ns", "v1", {"schema_binding": True})
    assert lake.list_tables("ns") == ["t1", "t2"]
    assert lake.list_views("ns") == ["v1"]
    t2 = lake.describe_table("ns", "t2")
    assert t2.table_format == "ICEBERG" and dict(t2.properties) == {"k": "v"} and t2.id
    assert lake.describe_view("ns", "v1").schema_binding is True
    assert [str(r) for r in lake.snapshot().list_objects("ns")] == ["ns.t1", "ns.t2", "ns.v1"]
    lake.check()


def test_table_and_view_cannot_share_a_name(ns_lake) -> None:
    ns_lake.create_table("ns", "x")
    with pytest.raises(AlreadyExistsError, match=r"table ns\.x already exists"):
        ns_lake.create_view("ns", "x")


def test_create_in_missing_namespace(ns_lake) -> None:
    with pytest.raises(NamespaceNotFoundError):
        ns_lake.create_table("missing", "t")


def test_replace_keeps_id(ns_lake) -> None:
    ns_lake.create_table("ns", "t", {"properties": {"a": "1"}})
    first = ns_lake.describe_table("ns", "t")
    ns_lake.replace_table("ns", "t", {"properties": {"a": "2"}})
    second = ns_lake.describe_table("ns", "t")
    assert second.id == first.id and second.properties["a"] == "2"
    with pytest.raises(ObjectNotFoundError):
        ns_lake.replace_table("ns", "nope", {})


def test_drop(ns_lake) -> None:
    ns_lake.create_table("ns", "t")
    ns_lake.drop_table("ns", "t")
    assert ns_lake.list_tables("ns") == []
    with pytest.raises(ObjectNotFoundError, match=r"table ns\.t does not exist"):
        ns_lake.drop_table("ns", "t")


def test_rename_within_and_across_namespaces(ns_lake) -> None:
    lake = ns_lake
    lake.create_table("ns", "t", {"properties": {"a": "1"}})
    lake.rename_table("ns", "t", "ns", "u")
    assert lake.list_tables("ns") == ["u"]
    lake.rename_table("ns", "u", "other", "w")
    assert lake.list_tables("ns") == [] and lake.list_tables("other") == ["w"]
    assert lake.describe_table("other", "w").properties["a"] == "1"
    lake.create_view("ns", "v")
    with pytest.raises(AlreadyExistsError):
        lake.rename_view("ns", "v", "other", "w")
    with pytest.raises(NamespaceNotFoundError):
        lake.rename_view("ns", "v", "gone", "v")
    lake.check()


def test_bad_definitions_are_refused(ns_lake) -> None:
    with pytest.raises(InvalidArgumentError):
        ns_lake.create_table("ns", "t", {"no_such_field": 1})
    with pytest.raises(InvalidArgumentError):
        ns_lake.create_table("ns", "t", {"properties": "not a map"})
    assert ns_lake.list_tables("ns") == []


def test_list_tables_pages_and_does_not_read_definitions(ns_lake) -> None:
    lake = ns_lake
    with lake.transaction() as txn:
        for i in range(300):
            txn.create_table("ns", f"t{i:03d}")
    lake.create_table("ns", "zz")  # flushes the bulk commit into the tree
    snap = lake.snapshot()
    stats = lake.storage.stats
    before = stats.snapshot()
    names = []
    after = None
    while page := snap.list_tables("ns", start_after=after, limit=64):
        names += page
        after = page[-1]
    assert names == [f"t{i:03d}" for i in range(300)] + ["zz"]
    read_files = stats.snapshot()["read"] - before["read"]
    assert read_files < 50  # node files and the namespace definition, never 300 definitions
