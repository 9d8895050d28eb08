"""Regression: after a lost race a commit slept *after* moving onto the latest version.

Every other writer that committed during that sleep took the version the transaction
was about to create, so on a busy lakehouse a transaction that lost a few races kept
losing (the longer the backoff, the surer the loss) until CommitRetriesExhaustedError:
8 writers x 200 commits on a local directory gave up on 8 transactions. The backoff
must come before reading the latest version, not between reading it and using it.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.txn import transaction as transaction_module


def test_commit_wins_when_another_writer_commits_during_every_backoff(tmp_path, monkeypatch):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url)
    lake.create_namespace("ns")
    competitor = Lakehouse.open(url)
    sleeps = []
    competing: list[bool] = []

    def busy_sleep(seconds: float) -> None:
        # a lakehouse busy enough that another commit lands during each backoff
        if competing:
            return  # the competitor's own backoff (its commit may start on a stale base)
        sleeps.append(seconds)
        competing.append(True)
        try:
            competitor.create_table("ns", f"other{len(sleeps)}")
        finally:
            competing.pop()

    monkeypatch.setattr(transaction_module.time, "sleep", busy_sleep)
    with lake.transaction() as txn:
        txn.create_table("ns", "mine")
        competitor.create_table("ns", "first")  # the first attempt loses its race
    assert txn.txn.attempts == 2
    assert txn.txn.replays == 1
    assert "mine" in lake.list_tables("ns")
    lake.check()


@pytest.mark.parametrize("isolation", ["SNAPSHOT", "SERIALIZABLE"])
def test_conflict_found_after_the_backoff_is_still_reported(tmp_path, monkeypatch, isolation):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url)
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    competitor = Lakehouse.open(url)

    competing: list[bool] = []

    def sleep_then_conflict(seconds: float) -> None:
        if competing:
            return  # the competitor's own backoff (its commit may start on a stale base)
        competing.append(True)
        try:
            competitor.replace_table("ns", "t", {"properties": {"by": "competitor"}})
        finally:
            competing.pop()

    monkeypatch.setattr(transaction_module.time, "sleep", sleep_then_conflict)
    from trinityfs.errors import CommitConflictError

    with pytest.raises(CommitConflictError), lake.transaction(isolation=isolation) as txn:
        txn.replace_table("ns", "t", {"properties": {"by": "me"}})
        competitor.create_table("ns", "first")  # lose the first race on a harmless change
    assert lake.describe_table("ns", "t").properties["by"] == "competitor"
