"""Regression: a transient error reading a distributed transaction's file (a timeout,
a refused request) during expiration lost that transaction. Expiration caught every
error alike and went on without the file's content: it neither kept the transaction's
base version nor marked its running root, so it expired the base, swept the saved
changes, and the next `load_distributed(id).commit()` failed with "began at version N,
which was expired" (fsck then reports the transaction broken). Expiration must refuse
instead; a file that is gone (committed meanwhile) or damaged is still tolerated."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import StorageError
from trinityfs.storage import Storage


def _lake_with_saved_transaction(tmp_path) -> tuple[Lakehouse, str]:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, order=4)
    lake.create_namespace("ns")
    for i in range(10):
        lake.create_table("ns", f"t{i}")
    txn = lake.begin_distributed()
    txn.create_table("ns", "pending", {"properties": {"saved": "yes"}})
    txn.save()
    for i in range(10):  # the transaction's base is now old
        lake.replace_table("ns", f"t{i}", {"properties": {"gen": "2"}})
    return lake, txn.id


def _expire(url: str):
    with expiring_later():
        return Lakehouse.open(url).expire(max_age_millis=0, min_versions=2, grace_millis=0)


def test_transaction_file_unreadable_for_a_moment(tmp_path, monkeypatch) -> None:
    lake, txn_id = _lake_with_saved_transaction(tmp_path)
    real_read = Storage.read

    def flaky(self, loc, *args, **kwargs):
        if "-txn-" in loc:
            raise StorageError(f"timed out reading {loc}")
        return real_read(self, loc, *args, **kwargs)

    monkeypatch.setattr(Storage, "read", flaky)
    with pytest.raises(StorageError, match="timed out"):
        _expire(lake.url)
    monkeypatch.undo()

    version = Lakehouse.open(lake.url).load_distributed(txn_id).commit()  # not lost
    fresh = Lakehouse.open(lake.url)
    assert fresh.describe_table("ns", "pending").properties["saved"] == "yes"
    assert fresh.latest_version() == version
    assert fresh.fsck().ok
    report = _expire(lake.url)  # once the store answers, expiration runs
    assert report.oldest_version == version - 1


def test_transaction_committed_between_listing_and_reading(tmp_path, monkeypatch) -> None:
    """What the fix must keep: a transaction file gone since the listing is no error."""
    lake, txn_id = _lake_with_saved_transaction(tmp_path)
    real_read = Storage.read
    committed: list[int] = []
    started: list[str] = []

    def commit_first(self, loc, *args, **kwargs):
        if "-txn-" in loc and not started:
            started.append(loc)  # the commit below reads the file too
            committed.append(Lakehouse.open(lake.url).load_distributed(txn_id).commit())
        return real_read(self, loc, *args, **kwargs)

    monkeypatch.setattr(Storage, "read", commit_first)
    report = _expire(lake.url)
    monkeypatch.undo()
    assert committed and report.latest_version >= committed[0]
    fresh = Lakehouse.open(lake.url)
    assert "pending" in fresh.list_tables("ns")
    assert fresh.fsck().ok
