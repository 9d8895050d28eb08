"""A distributed transaction builds on its base version, possibly old, so after its root
lands it checks that the base root is still there (`publish.create_root`, source check).
When an expiration removed the base root right after our root landed (it counted our
root among the kept ones, so it marked everything our root references), the commit
raised TransactionExpiredError ("version 7 was expired while version 8 was being built
on it") although version 8 had landed, whole and readable: a commit reported failed that
landed (the caller retries; the transaction file stayed behind). A rollback in the same
case checks the new root file by file; the commit did not. Found by helper edges
(2026-11-25) while fixing the distributed commit after expiry.

Now the commit checks the same way: every file there, it stands (the version is
returned, the transaction file removed); a file gone, the base tree is committed again
on top and TransactionExpiredError says nothing stays committed.

A real expiration runs right after the root's create, "10 minutes later" by its own
clock (tests/expire_clock.py): the writer paused between its create and the source
check, the transaction (ttl 1 minute) expired meanwhile, so the expiration keeps only
the newest version, ours."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later
from late_commits import small_lake

from trinityfs import Lakehouse
from trinityfs.errors import TransactionExpiredError, TransactionNotFoundError
from trinityfs.txn.roots import RootStore


def _expire_right_after_the_create(monkeypatch, lake: Lakehouse, also_delete=None) -> list[int]:
    real_create = RootStore.create
    created: list[int] = []

    def create_then_expire(self, version, data, *flush):
        landed = real_create(self, version, data, *flush)
        if landed and not created:
            created.append(version)
            with expiring_later(10):
                report = Lakehouse.open(lake.url).expire(
                    max_age_millis=0, min_versions=1, grace_millis=0
                )
            assert report.roots_removed, "the expiration kept the base version"
            if also_delete is not None:
                lake.engine.storage.delete(also_delete())
        return landed

    monkeypatch.setattr(RootStore, "create", create_then_expire)
    return created


def _saved_dtxn(lake: Lakehouse):
    # expiration keeps the base of a transaction until expire_at plus the grace: the
    # one running "10 minutes later" finds this one expired long ago
    dtxn = lake.begin_distributed(ttl_millis=60_000)
    dtxn.create_table("ns", "saved", {"properties": {"k": "v"}})
    dtxn.save()
    return Lakehouse.open(lake.url).load_distributed(dtxn.id)


def test_a_distributed_commit_whose_base_is_expired_right_after_it_landed(tmp_path, monkeypatch):
    lake = small_lake(tmp_path)
    dtxn = _saved_dtxn(lake)
    before = lake.latest_version()
    created = _expire_right_after_the_create(monkeypatch, lake)
    version = dtxn.commit()
    monkeypatch.undo()
    assert created == [before + 1] and version == before + 1
    assert dtxn.txn.committed_version == version
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert fresh.describe_table("ns", "saved").properties["k"] == "v"
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    with pytest.raises(TransactionNotFoundError):
        fresh.load_distributed(dtxn.id)


def test_a_distributed_commit_whose_base_is_expired_and_a_file_gone(tmp_path, monkeypatch):
    """The file check finds a saved definition gone: undone, nothing stays committed."""
    lake = small_lake(tmp_path)
    dtxn = _saved_dtxn(lake)
    before = lake.latest_version()
    key = next(iter(dtxn.txn.pending))
    _expire_right_after_the_create(monkeypatch, lake, lambda: dtxn.txn.pending[key])
    with pytest.raises(TransactionExpiredError, match="nothing stays committed"):
        dtxn.commit()
    monkeypatch.undo()
    assert dtxn.txn.committed_version is None
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before + 2  # the version, then its undo
    assert "saved" not in fresh.list_tables("ns")
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
