"""Retry timing of commits that lose the race for a version: a jittered, bounded
backoff and a total budget.

Fairness under contention: every loser waits a random time up to a small cap that
does not keep growing with its losses (an exponential wait that reaches seconds makes
the unlucky writer lose ever more often: it starves while fresh writers win), and the
commit keeps trying until its budget runs out rather than after a fixed number of
lost races. The budget also bounds how long a commit's new files wait for their root,
which is what expiration's grace floor relies on (`commit_window_millis`).
"""

from __future__ import annotations

import random
import time

from trinityfs.format.trinitylake_pb2 import LakehouseDef

#: The longest one commit keeps retrying after writing its files (documented budget).
COMMIT_BUDGET_SECONDS = 120.0
BACKOFF_BASE_SECONDS = 0.002
BACKOFF_CAP_SECONDS = 0.05


def commit_window_millis(ldef: LakehouseDef) -> int:
    """The longest a commit may take from writing its files to creating its root:
    the commit budget, or the transaction TTL when that is shorter (a commit past
    txn_ttl_millis is refused)."""
    budget = int(COMMIT_BUDGET_SECONDS * 1000)
    ttl = ldef.txn_ttl_millis
    return min(budget, ttl) if ttl else budget


class Backoff:
    """Waits between attempts: uniform in [0, min(cap, base * 2**n)] for the n-th loss."""

    def __init__(self, base: float = BACKOFF_BASE_SECONDS, cap: float = BACKOFF_CAP_SECONDS):
        self.base = base
        self.cap = cap
        self.losses = 0

    def sleep(self, deadline: float | None = None) -> None:
        """Sleep before the next attempt (never past `deadline`, a monotonic time)."""
        delay = random.uniform(0, min(self.cap, self.base * 2 ** min(self.losses, 30)))
        self.losses += 1
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - time.monotonic()))
        if delay > 0:
            time.sleep(delay)
