"""Regression: after a lost race a commit slept *after* moving onto the latest version.

Every other writer that committed during that sleep took the version the transaction
was about to create, so on a busy lakehouse a transaction that lost a few races kept
losing (the longer the backoff, the surer the loss) until CommitRetriesExhaustedError:
8 writers x 200 commits on a local directory gave up on 8 transactions. The backoff
must come before reading the latest version, not between reading it and using it.

The tests replace `time.sleep`, which is process-wide: only the test's own thread gets
the replacement (`_in_this_thread`). Other threads keep sleeping: py4j's FinalizerWorker,
left running by the Spark tests, sleeps in `except IndexError` after popping its empty
deque; with the replacement it busy-looped, committing as the competitor from its own
thread (extra lost races, and "IndexError: pop from an empty deque" reported as the
context of whatever that commit raised).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from trinityfs import Lakehouse
from trinityfs.txn import transaction as transaction_module

_real_sleep = time.sleep


def _in_this_thread(fake: Callable[[float], None]) -> Callable[[float], None]:
    """`fake` for the calling thread; every other thread really sleeps."""
    owner = threading.get_ident()

    def sleep(seconds: float) -> None:
        if threading.get_ident() != owner:
            return _real_sleep(seconds)
        return fake(seconds)

    return sleep


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

    monkeypatch.setattr(transaction_module.time, "sleep", _in_this_thread(busy_sleep))
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

    monkeypatch.setattr(transaction_module.time, "sleep", _in_this_thread(sleep_then_conflict))
    from trinityfs.errors import CommitConflictError

    with pytest.raises(CommitConflictError), lake.transaction(isolation=isolation) as txn:
        txn.replace_table("ns", "t", {"properties": {"by": "me"}})
        competitor.create_table("ns", "first")  # lose the first race on a harmless change
    assert lake.describe_table("ns", "t").properties["by"] == "competitor"
