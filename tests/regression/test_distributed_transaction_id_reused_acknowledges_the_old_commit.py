"""A distributed transaction id used again: the new transaction was answered with the
old one's outcome, and handles of the old one acted on the new one.

(1) `begin` takes its base (the latest version) before it creates the transaction
file. When the earlier transaction of the same id landed its root in between (its
root lands before its file is removed, and the new file can only be created after
that), the old commit sat above the new base: the new transaction's commit lost the
race for that root, found a root naming its id, and was told TransactionClosedError
"already committed as version N". Nothing of it had landed: a false acknowledgement.
(2) A handle of the earlier transaction (loaded in another process before it was
committed) acting after the id was begun again: `abort()` returned normally and deleted
the new transaction's file; `commit()` was told "already committed" (true) and then
deleted the new transaction's file too; `save()` overwrote it with the old state.

Now the root a distributed transaction commits also names the transaction's beginning
(`trinityfs_transaction_began`: began_at_millis and the beginning root), and only a root
naming both counts as its commit; commit, abort and save check that the stored file is
still their transaction (same beginning), not one begun again under the same id.
"""

from __future__ import annotations

import pytest

import trinityfs.lifecycle.dtxn as dtxn_module
from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError, TransactionNotFoundError


def _lake(where) -> Lakehouse:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")
    return lake


def _other(lake: Lakehouse, where) -> Lakehouse:
    return Lakehouse.open(lake.url, storage_options=where[1])


def test_an_old_commit_landing_while_the_id_is_begun_again_is_not_its_commit(
    where, monkeypatch
) -> None:
    lake = _lake(where)
    old = lake.begin_distributed(txn_id="t1")
    old.create_table("ns", "old")
    old.save()
    real_create = dtxn_module.create_settled
    landed: list[int] = []

    def old_commit_lands_first(storage, location, data, what):
        if what == "distributed transaction t1" and not landed:
            # the new begin took its base (version 1); the old commit lands now
            landed.append(-1)
            landed.append(old.commit())
        return real_create(storage, location, data, what)

    monkeypatch.setattr(dtxn_module, "create_settled", old_commit_lands_first)
    new_lake = _other(lake, where)
    new = new_lake.begin_distributed(txn_id="t1")
    monkeypatch.setattr(dtxn_module, "create_settled", real_create)
    assert landed == [-1, 2] and new.version == 1
    new.create_table("ns", "new")
    version = new.commit()  # lands (replayed onto version 2): it is no old commit
    assert version == 3
    fresh = _other(lake, where)
    assert fresh.list_tables("ns") == ["new", "old"]


def test_an_old_handle_cannot_abort_the_transaction_begun_again(where) -> None:
    lake = _lake(where)
    old = lake.begin_distributed(txn_id="t1")
    old.create_table("ns", "old")
    old.save()
    stale = _other(lake, where).load_distributed("t1")
    assert old.commit() == 2
    new = _other(lake, where).begin_distributed(txn_id="t1")
    new.create_table("ns", "new")
    new.save()
    with pytest.raises(TransactionClosedError, match="committed as version 2"):
        stale.abort()  # its transaction was committed: never "aborted"
    assert new.commit() == 3
    assert _other(lake, where).list_tables("ns") == ["new", "old"]


def test_an_old_handle_commit_leaves_the_transaction_begun_again(where) -> None:
    lake = _lake(where)
    old = lake.begin_distributed(txn_id="t1")
    old.create_table("ns", "old")
    old.save()
    stale = _other(lake, where).load_distributed("t1")
    assert old.commit() == 2
    new = _other(lake, where).begin_distributed(txn_id="t1")
    new.create_table("ns", "new")
    new.save()
    with pytest.raises(TransactionClosedError, match="committed as version 2"):
        stale.commit()
    assert new.commit() == 3
    assert _other(lake, where).list_tables("ns") == ["new", "old"]


def test_an_old_handle_save_does_not_overwrite_the_transaction_begun_again(where) -> None:
    lake = _lake(where)
    old = lake.begin_distributed(txn_id="t1")
    old.create_table("ns", "old")
    old.save()
    stale = _other(lake, where).load_distributed("t1")
    assert old.commit() == 2
    new = _other(lake, where).begin_distributed(txn_id="t1")
    new.create_table("ns", "new")
    new.save()
    stale.create_table("ns", "stale")
    with pytest.raises((TransactionNotFoundError, TransactionClosedError)):
        stale.save()
    loaded = _other(lake, where).load_distributed("t1")
    assert loaded.commit() == 3
    assert _other(lake, where).list_tables("ns") == ["new", "old"]
