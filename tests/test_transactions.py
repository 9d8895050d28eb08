"""Transactions: atomicity, read-your-writes, isolation, replay after a lost race."""

from __future__ import annotations

import itertools

import pytest

from trinityfs.errors import CommitConflictError, InvalidArgumentError, TransactionClosedError


def test_several_changes_one_commit(lake) -> None:
    with lake.transaction() as txn:
        txn.create_namespace("ns")
        txn.create_table("ns", "t1")
        txn.create_table("ns", "t2")
        assert txn.list_tables("ns") == ["t1", "t2"]  # read-your-writes
        txn.rename_table("ns", "t2", "ns", "t3")
        assert txn.list_tables("ns") == ["t1", "t3"]
    assert lake.latest_version() == 1
    assert [(c.action, str(c.object)) for c in lake.changes(1)] == [
        ("created", "ns"),
        ("created", "ns.t1"),
        ("created", "ns.t3"),
    ]


def test_exception_discards_everything(lake) -> None:
    lake.create_namespace("ns")
    with pytest.raises(RuntimeError), lake.transaction() as txn:
        txn.create_table("ns", "t")
        raise RuntimeError("boom")
    assert lake.latest_version() == 1
    assert lake.list_tables("ns") == []


def test_empty_transaction_commits_nothing(lake) -> None:
    with lake.transaction() as txn:
        assert txn.list_namespaces() == []
    assert lake.latest_version() == 0


def test_closed_transaction_refuses_writes(lake) -> None:
    txn = lake.transaction()
    txn.create_namespace("a")
    txn.commit()
    with pytest.raises(TransactionClosedError):
        txn.create_namespace("b")


def test_disjoint_concurrent_transactions_both_land(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.create_table("ns", "a")
    t2.create_table("ns", "b")
    assert t1.commit() == 2
    assert t2.commit() == 3  # lost the race for version 2, replayed onto it
    assert t2.txn.replays == 1
    assert lake.list_tables("ns") == ["a", "b"]
    lake.check()


def test_write_write_conflict_names_key_and_version(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.create_table("ns", "a")
    t2.create_table("ns", "a")
    t1.commit()
    with pytest.raises(CommitConflictError) as info:
        t2.commit()
    assert info.value.version == 2
    assert "ns" in info.value.key and "a" in info.value.key
    assert lake.latest_version() == 2


def test_create_in_namespace_dropped_concurrently_conflicts(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.drop_namespace("ns")
    t2.create_table("ns", "t")
    t1.commit()
    with pytest.raises(CommitConflictError, match="dropped by version 2"):
        t2.commit()


def test_drop_namespace_that_gained_objects_conflicts(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.create_table("ns", "t")
    t2.drop_namespace("ns", cascade=True)
    t1.commit()
    with pytest.raises(CommitConflictError, match="namespace it drops"):
        t2.commit()
    assert lake.list_tables("ns") == ["t"]


@pytest.mark.parametrize("isolation", ["SNAPSHOT", "SERIALIZABLE"])
def test_read_range_changed_conflicts_only_when_serializable(lake, isolation) -> None:
    lake.create_namespace("ns")
    lake.create_table("ns", "x")
    t1 = lake.transaction(isolation=isolation)
    t2 = lake.transaction(isolation=isolation)
    assert t1.list_tables("ns") == ["x"]  # t1 reads the namespace's key range
    t1.create_table("ns", "summary_of_x")
    t2.create_table("ns", "newcomer")  # changes the range t1 read
    t2.commit()
    if isolation == "SNAPSHOT":
        t1.commit()  # write skew is allowed under snapshot isolation
        assert lake.list_tables("ns") == ["newcomer", "summary_of_x", "x"]
    else:
        with pytest.raises(CommitConflictError, match="serializable"):
            t1.commit()
        assert lake.list_tables("ns") == ["newcomer", "x"]


def test_unknown_isolation_level(lake) -> None:
    with pytest.raises(InvalidArgumentError, match="isolation"):
        lake.transaction(isolation="READ_UNCOMMITTED")


def test_transaction_at_an_older_version_replays(lake) -> None:
    lake.create_namespace("ns")
    lake.create_table("ns", "a")
    with lake.transaction(version=1) as txn:
        assert txn.list_tables("ns") == []
        txn.create_table("ns", "b")
    assert lake.list_tables("ns") == ["a", "b"]
    assert lake.latest_version() == 3


def test_created_at_is_monotonic(lake) -> None:
    for i in range(20):
        lake.create_namespace(f"n{i}")
    times = [v.created_at_millis for v in lake.versions()]
    assert all(a < b for a, b in itertools.pairwise(times))


def test_concurrent_table_and_view_with_one_name_conflict(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.create_table("ns", "same")
    t2.create_view("ns", "same")
    t1.commit()
    with pytest.raises(CommitConflictError, match="an object name it checked"):
        t2.commit()
    assert lake.list_tables("ns") == ["same"] and lake.list_views("ns") == []
