"""Retry timing of commits that lose the race for a version: priority by age, a bounded
wait and a total budget.

Fairness under contention: who wins version v+1 is whoever creates its root first among
the writers that read version v. Symmetric random backoff makes each race a lottery, so
a writer's number of lost races per commit is geometric and an unlucky writer falls far
behind (and an exponential backoff that reaches seconds makes it lose ever more often).
Instead, a commit's wait before it reads the latest version again *shrinks* with the
races it has lost in a row: a commit that lost one race waits about one attempt's
duration, one that lost `PRIORITY_LOSSES` races does not wait at all, so it reads the
new version first and its root lands first. Under recent contention a fresh commit
(no loss yet) waits longest, so the writer that just won does not win again ahead of
the ones it beat. Waits are measured in this process's own attempt durations (an
attempt, building the root and creating it, is milliseconds on a local disk, tens of
milliseconds on S3; catching up with the versions a lost race brought is not part of
it), jittered so equal-priority writers do not collide again, and capped
(`BACKOFF_CAP_SECONDS`). What was lost lately is shared by every handle of one
lakehouse in a process (`contention_of`); writers in other processes learn of each
other only by losing races, so the catch-up after one is kept short
(`RootStore.newer_versions`).

No writer is ever blocked by another: waiting is voluntary, and a commit keeps trying
until its budget (`COMMIT_BUDGET_SECONDS`) runs out rather than after a fixed number of
lost races. The budget also bounds how long a commit's new files wait for their root,
which is what expiration's grace floor relies on (`commit_window_millis`).
"""

from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING

from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lru import LRU

if TYPE_CHECKING:
    from trinityfs.txn.engine import Engine

#: The longest one commit keeps retrying after writing its files (documented budget).
COMMIT_BUDGET_SECONDS = 120.0
#: Lost races in a row after which a commit retries at once (top priority).
PRIORITY_LOSSES = 4
#: The longest single wait, whatever attempts cost.
BACKOFF_CAP_SECONDS = 1.0
#: A lost race seen within this many attempt durations means "contention now".
CONTENTION_MEMORY_ATTEMPTS = 2 * (PRIORITY_LOSSES + 1)


def commit_window_millis(ldef: LakehouseDef) -> int:
    """The longest a commit may take from writing its files to creating its root:
    the commit budget, or the transaction TTL when that is shorter (a commit past
    txn_ttl_millis is refused)."""
    budget = int(COMMIT_BUDGET_SECONDS * 1000)
    ttl = ldef.txn_ttl_millis
    return min(budget, ttl) if ttl else budget


class Contention:
    """What the commits of one lakehouse handle have seen: how long an attempt (read
    the latest version, build, create the root) takes, and when a race was last lost.
    Shared by that handle's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.attempt_seconds: float | None = None  # moving average
        self.last_loss = float("-inf")

    def observe(self, seconds: float, lost: bool) -> None:
        with self._lock:
            previous = self.attempt_seconds
            self.attempt_seconds = seconds if previous is None else 0.7 * previous + 0.3 * seconds
            if lost:
                self.last_loss = time.monotonic()

    def recent(self) -> bool:
        """Whether a race was lost in the last few attempt durations."""
        span = min(BACKOFF_CAP_SECONDS, self.attempt_seconds or 0.0)
        return time.monotonic() - self.last_loss < CONTENTION_MEMORY_ATTEMPTS * span

    def wait(self, losses: int) -> float:
        """Seconds to wait before the next attempt of a commit that lost `losses` races
        in a row (0 = a fresh commit under contention): (K - losses + U) / K attempt
        durations, U uniform in [0, 1), 0 from K = PRIORITY_LOSSES losses on."""
        if losses >= PRIORITY_LOSSES:
            return 0.0
        span = min(BACKOFF_CAP_SECONDS, self.attempt_seconds or 0.0)
        return span * (PRIORITY_LOSSES - losses + random.random()) / PRIORITY_LOSSES


_contention: LRU[str, Contention] = LRU(256)
_contention_lock = threading.Lock()


def contention_of(engine: Engine) -> Contention:
    """The Contention record of one lakehouse in this process (created on first use):
    shared by every handle open on its URL. Kept per handle, a writer that won every
    race never saw that another handle of the same process kept losing, and never
    yielded to it (on S3 a thread committing on its own handle lost for seconds)."""
    with _contention_lock:
        found = _contention.get(engine.storage.url)
        if found is None:
            found = Contention()
            _contention.put(engine.storage.url, found)
        return found


class Backoff:
    """The waits of one commit: `defer_fresh` before its first attempt, `sleep` after
    each lost race; `attempted` records each attempt's duration and outcome."""

    def __init__(self, contention: Contention | None = None):
        self.contention = contention or Contention()
        self.losses = 0
        self._started = time.monotonic()

    def start_attempt(self) -> None:
        self._started = time.monotonic()

    def attempted(self, lost: bool) -> None:
        self.contention.observe(time.monotonic() - self._started, lost)
        if lost:
            self.losses += 1

    def should_defer_fresh(self) -> bool:
        """A fresh commit yields to the ones that lost races lately (see module doc)."""
        return self.losses == 0 and self.contention.recent()

    def sleep(self, deadline: float | None = None) -> None:
        """Sleep before the next attempt (never past `deadline`, a monotonic time)."""
        delay = self.contention.wait(self.losses)
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - time.monotonic()))
        if delay > 0:
            time.sleep(delay)
