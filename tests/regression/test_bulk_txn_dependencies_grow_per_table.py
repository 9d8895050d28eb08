"""Issue 13 (bulk load memory): a SNAPSHOT transaction recorded every key it looked up
(only SERIALIZABLE validates reads) and every name it claimed as a one-key range (two
strings and a tuple per table, and a linear scan of all of them per changed key when
validating after a lost race). Reads are now recorded only under SERIALIZABLE and
claimed names are kept in a set."""

from __future__ import annotations

import pytest

from trinityfs.errors import CommitConflictError


def test_snapshot_bulk_txn_keeps_one_entry_per_claimed_name(lake) -> None:
    lake.create_namespace("ns")
    txn = lake.transaction()
    for i in range(300):
        txn.create_table("ns", f"t{i:04d}")
    deps = txn.txn.deps
    assert deps.read_keys == set() and deps.read_ranges == []
    assert deps.unchanged_ranges == [] and len(deps.unchanged_keys) == 300
    lake.create_table("ns", "other")  # a lost race: validated against a set
    assert txn.commit() == 3
    assert len(lake.list_tables("ns")) == 301


def test_claimed_name_still_conflicts(lake) -> None:
    lake.create_namespace("ns")
    txn = lake.transaction()
    txn.create_table("ns", "same")
    lake.create_view("ns", "same")
    with pytest.raises(CommitConflictError, match=r"view 'ns\.same'"):
        txn.commit()


def test_serializable_still_records_reads(lake) -> None:
    lake.create_namespace("ns")
    txn = lake.transaction(isolation="SERIALIZABLE")
    txn.list_tables("ns")
    assert txn.txn.deps.read_ranges and txn.txn.deps.read_keys
