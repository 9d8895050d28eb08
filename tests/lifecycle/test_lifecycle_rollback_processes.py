"""Rollbacks to the oldest kept versions in two processes while a third expires and
this one commits (real time: txn_ttl_millis 2000 makes the grace period 2 s). Every
acknowledged rollback equals its target, every kept version reads in full, fsck is
clean. (The existing rollback race tests inject one race in one process; the shared
handle test, tests/lifecycle/test_lifecycle_shared_handle.py, uses threads.)"""

from __future__ import annotations

import contextlib
import multiprocessing
import time

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import FAST_TREE, NO_FSYNC, make_history, read_fully
from rollback_workers import expire_again_and_again, roll_back_to_the_oldest

from trinityfs import Lakehouse
from trinityfs.errors import CommitRetriesExhaustedError, TransactionExpiredError

SECONDS = 8.0


@pytest.mark.stress
def test_rollbacks_in_processes_racing_expiration(tmp_path) -> None:
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options=NO_FSYNC, txn_ttl_millis=2000, **FAST_TREE)
    make_history(lake, 40, tables=20)
    with expiring_later():  # version 0, before the namespace, is no rollback target
        lake.expire(max_age_millis=0, min_versions=30, grace_millis=0)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=roll_back_to_the_oldest, args=(url, SECONDS, seed, out))
        for seed in (1, 2)
    ]
    procs.append(ctx.Process(target=expire_again_and_again, args=(url, SECONDS, out)))
    for p in procs:
        p.start()
    made: dict[str, int] = {}
    deadline = time.monotonic() + SECONDS
    n = 0
    while time.monotonic() < deadline:
        with contextlib.suppress(TransactionExpiredError, CommitRetriesExhaustedError):
            made[f"c{n}"] = lake.create_table("ns", f"c{n}")
        n += 1
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    errors = [r[1] for r in results if r[0] == "error"]
    assert not errors, errors
    rollbacks = [(t, v) for r in results if r[0] == "done" for _, t, v in r[1]]
    assert rollbacks and made
    assert sum(r[1] for r in results if r[0] == "expirations") > 0

    fresh = Lakehouse.open(url, storage_options=NO_FSYNC)
    oldest, latest = fresh.oldest_version(), fresh.latest_version()
    for version in range(oldest, latest + 1):  # no kept root names a swept file
        read_fully(fresh, version)
    for name, version in made.items():  # acknowledged creates hold in their version
        if version >= oldest:
            assert name in fresh.at(version).list_tables("ns"), (name, version)
    for target, version in rollbacks:
        if target >= oldest:
            assert fresh.at(version).list_tables("ns") == fresh.at(target).list_tables("ns")
    report = fresh.fsck()
    assert report.ok, report.errors[:5]
