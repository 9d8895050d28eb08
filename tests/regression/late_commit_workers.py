"""Process workers of tests/regression/test_late_commits_lose_files_to_slow_sweeps.py
(importable by name from spawned processes)."""

from __future__ import annotations

import importlib
import random
import time

from trinityfs import Lakehouse
from trinityfs.errors import (
    CommitConflictError,
    CommitRetriesExhaustedError,
    StorageFileNotFoundError,
    TransactionExpiredError,
)
from trinityfs.storage import Storage
from trinityfs.txn.roots import RootStore

NO_FSYNC = {"fsync": False}
REFUSALS = (TransactionExpiredError, CommitRetriesExhaustedError, CommitConflictError)


def write_with_pauses(url: str, seconds: float, seed: int, pause: float, out) -> None:
    """Create tables; before three in four root creates the process pauses `pause`
    seconds (longer than the commit window). Reports acknowledged (name, version) and refused
    names; any other error fails the test."""
    rng = random.Random(seed)
    real_create = RootStore.create

    def create_after_a_pause_now_and_then(self, version, data, *flush):
        if rng.random() < 0.75:
            time.sleep(pause)
        return real_create(self, version, data, *flush)

    RootStore.create = create_after_a_pause_now_and_then  # this process only
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    made: list[tuple[str, int]] = []
    refused: list[str] = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        name = f"w{seed}x{n}"
        n += 1
        try:
            made.append((name, lake.create_table("ns", name)))
        except REFUSALS:
            refused.append(name)
        except Exception as exc:  # reported to the test, which fails on any
            out.put(("error", f"{type(exc).__name__}: {exc}"))
            break
    out.put(("writer", made, refused))


def expire_slowly(url: str, seconds: float, delete_seconds: float, out) -> None:
    """Expire again and again on a slow store: a sweep starts deleting 2 s after it
    chose what to delete (as one with many files to delete before a given one
    would), then deletes one file at a time, each `delete_seconds` long. Late roots
    land inside sweeps."""
    module = importlib.import_module("trinityfs.lifecycle.expire")
    expire, real_find = module.expire, module.find_unreachable

    def find_then_wait(*args, **kwargs):
        sweep = real_find(*args, **kwargs)
        time.sleep(2.0)
        return sweep

    module.find_unreachable = find_then_wait  # this process only
    real_delete = Storage.delete

    def slow_delete(self, location, *args, **kwargs):
        time.sleep(delete_seconds)
        return real_delete(self, location, *args, **kwargs)

    Storage.delete = slow_delete  # this process only
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    runs = stopped = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            expire(lake.engine, max_age_millis=0, min_versions=1, grace_millis=0, threads=1)
            runs += 1
        except StorageFileNotFoundError:
            stopped += 1  # a late root marked before its committer wrote its files back
        except Exception as exc:  # reported to the test, which fails on any
            out.put(("error", f"{type(exc).__name__}: {exc}"))
            break
    out.put(("expirer", runs, stopped))
