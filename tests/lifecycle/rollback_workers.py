"""Process workers of tests/lifecycle/test_lifecycle_rollback_processes.py (importable
by name from spawned processes)."""

from __future__ import annotations

import random
import time

from trinityfs import Lakehouse
from trinityfs.errors import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    TransactionExpiredError,
    VersionNotFoundError,
)

NO_FSYNC = {"fsync": False}
REFUSALS = (
    VersionNotFoundError,
    TransactionExpiredError,
    CommitConflictError,
    CommitRetriesExhaustedError,
)


def roll_back_to_the_oldest(url: str, seconds: float, seed: int, out) -> None:
    """Roll back to a version right at the oldest kept one, again and again; report
    (target, version) of each rollback acknowledged and any unexpected error."""
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    rng = random.Random(seed)
    done: list[tuple[str, int, int]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            target = lake.oldest_version() + rng.randrange(3)
            done.append(("rollback", target, lake.rollback(target)))
        except REFUSALS:
            pass
        except Exception as exc:  # reported to the test, which fails on any
            done.append(("error", 0, 0))
            out.put(("error", f"{type(exc).__name__}: {exc}"))
            break
        time.sleep(rng.random() * 0.05)
    out.put(("done", done))


def expire_again_and_again(url: str, seconds: float, out) -> None:
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    runs = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            lake.expire(max_age_millis=0, min_versions=2, grace_millis=0)
            runs += 1
        except Exception as exc:  # reported to the test, which fails on any
            out.put(("error", f"{type(exc).__name__}: {exc}"))
            break
    out.put(("expirations", runs))
