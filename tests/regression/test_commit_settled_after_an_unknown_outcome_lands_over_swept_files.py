"""A commit whose root create had an unknown outcome (AmbiguousWriteError: the reply was
lost) is settled later by calling commit() again, settle() or abort(). When the root
had landed late (its writer paused past the commit window, an expiration swept the
commit's own new files meanwhile), settling acknowledged the version without the check
a late root makes when its create answers (9a22b86): the acknowledged version did not
read (StorageFileNotFoundError) and fsck failed.

Now settling a landed root makes the same check: swept definitions are written back
from the bytes the transaction holds.

The pause is simulated: the writer's clocks jump 10 minutes at the pause point, and the
expiration run there sees the same 10 minutes (tests/expire_clock.py)."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later
from late_commits import PAUSE_MS, assert_whole, jumping_clocks, small_lake

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, TransactionClosedError
from trinityfs.txn.roots import RootStore


def _ambiguous_late_commit(tmp_path, monkeypatch):
    """A transaction creating table late whose writer pauses 10 minutes right before
    its root's create (an expiration runs meanwhile), whose root lands, and whose
    create then reports an unknown outcome."""
    lake = small_lake(tmp_path)
    jump = jumping_clocks(monkeypatch, transaction_module)
    monkeypatch.setattr(
        transaction_module, "_await_sweeps_in_flight", lambda seconds: None, raising=False
    )
    real_create = RootStore.create
    txn = lake.transaction()
    txn.create_table("ns", "late", {"properties": {"k": "v"}})

    def create_after_a_pause_reply_lost(self, version, data, *flush):
        with expiring_later(PAUSE_MS / 60_000):
            Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        jump["ms"] = PAUSE_MS
        real_create(self, version, data, *flush)
        raise AmbiguousWriteError("the reply to the root's create was lost (test)")

    monkeypatch.setattr(RootStore, "create", create_after_a_pause_reply_lost)
    before = lake.latest_version()
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    monkeypatch.setattr(RootStore, "create", real_create)
    return lake, txn, before + 1


def test_commit_again_settles_a_late_root_and_writes_back_its_files(tmp_path, monkeypatch):
    lake, txn, version = _ambiguous_late_commit(tmp_path, monkeypatch)
    assert txn.commit() == version
    monkeypatch.undo()
    assert_whole(lake, version)


def test_settle_of_a_late_root_writes_back_its_files(tmp_path, monkeypatch):
    lake, txn, version = _ambiguous_late_commit(tmp_path, monkeypatch)
    assert txn.txn.settle() == version
    monkeypatch.undo()
    assert_whole(lake, version)


def test_abort_of_a_late_root_that_landed_writes_back_its_files(tmp_path, monkeypatch):
    lake, txn, version = _ambiguous_late_commit(tmp_path, monkeypatch)
    with pytest.raises(TransactionClosedError, match=f"committed as version {version}"):
        txn.abort()
    monkeypatch.undo()
    assert_whole(lake, version)
