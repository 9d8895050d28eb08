"""Regression: under contention the commit that had lost the most races waited longest.

The retry wait grew with the lost races (uniform up to min(50 ms, 2 ms * 2^n)), and a
fresh commit never waited, so who won each version was a lottery tilted against the
unlucky: on S3 with 8 writers on disjoint keys, attempts per commit reached 21-27 and
per-writer throughput ranged 0.46-0.58 (min/max) in 60-120 s. Now the wait shrinks with
the races lost in a row, down to none after PRIORITY_LOSSES, and a fresh commit under
recent contention waits longest (it yields to the writers it just beat).
"""

from __future__ import annotations

import itertools
import time

import pytest

from trinityfs import Lakehouse
from trinityfs.txn import backoff as backoff_module
from trinityfs.txn import transaction as transaction_module
from trinityfs.txn.backoff import PRIORITY_LOSSES, Contention

NO_FSYNC = {"fsync": False}


def test_wait_shrinks_with_lost_races() -> None:
    contention = Contention()
    contention.observe(0.2, lost=True)
    for _ in range(200):
        waits = [contention.wait(n) for n in range(PRIORITY_LOSSES + 2)]
        assert all(a >= b for a, b in itertools.pairwise(waits)), waits
        assert waits[PRIORITY_LOSSES] == 0 and waits[-1] == 0
        assert 0.2 >= waits[1] > 0


def test_retries_of_a_losing_commit_wait_less_and_less(tmp_path, monkeypatch) -> None:
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    competitor = Lakehouse.open(url, storage_options=NO_FSYNC)
    losses_to_force = PRIORITY_LOSSES + 2
    sleeps: list[float] = []
    real_rebase = transaction_module.Transaction._rebase

    def rebase_after_another_commit(self, base, ldef_location):
        # another writer takes the next version right after each rebase
        moved = real_rebase(self, base, ldef_location)
        if self.replays < losses_to_force - 1:
            competitor.create_table("ns", f"other{self.replays}")
        return moved

    monkeypatch.setattr(transaction_module.Transaction, "_rebase", rebase_after_another_commit)
    monkeypatch.setattr(backoff_module.time, "sleep", sleeps.append)
    # attempts of a steady length (0.1 s), so that the waits are comparable
    backoff_module.contention_of(lake.engine).attempt_seconds = 0.1
    monkeypatch.setattr(Contention, "observe", lambda c, seconds, lost: None)
    with lake.transaction() as txn:
        txn.create_table("ns", "mine")
        competitor.create_table("ns", "first")  # the first attempt loses
    assert txn.txn.attempts == losses_to_force + 1
    assert "mine" in lake.list_tables("ns")
    # one wait per lost race until PRIORITY_LOSSES, each shorter than the one before
    assert len(sleeps) == PRIORITY_LOSSES - 1, sleeps
    assert all(a > b for a, b in itertools.pairwise(sleeps)), sleeps
    lake.check()


@pytest.mark.parametrize("recent_loss", [True, False])
def test_fresh_commit_yields_only_under_recent_contention(tmp_path, monkeypatch, recent_loss):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    contention = backoff_module.contention_of(lake.engine)
    contention.attempt_seconds = 0.05
    if recent_loss:
        contention.last_loss = time.monotonic()
    sleeps: list[float] = []
    monkeypatch.setattr(backoff_module.time, "sleep", sleeps.append)
    lake.create_table("ns", "t")
    if recent_loss:
        assert len(sleeps) == 1 and sleeps[0] >= 0.05 * 0.99
    else:
        assert sleeps == []
    assert lake.list_tables("ns") == ["t"]
