"""One Lakehouse object shared by threads that commit, roll back to the oldest kept
versions, export, run distributed transactions and expire (with real time: a short
txn_ttl_millis makes the grace period two seconds), all at once. Afterwards every kept
version and export reads in full, fsck is clean, and every acknowledged commit holds
what it said in its version. (Existing tests race expiration with other processes'
commits, or inject one race at a time; none shares one handle between all of them.)"""

from __future__ import annotations

import random
import threading
import time

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import FAST_TREE, NO_FSYNC, make_history, read_fully

from trinityfs import Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    StorageFileNotFoundError,
    TransactionExpiredError,
    VersionNotFoundError,
)

TTL_MILLIS = 2000
SECONDS = 8.0
# what a thread may be told when it loses to expiration or to another thread
REFUSALS = (
    VersionNotFoundError,
    TransactionExpiredError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    AlreadyExistsError,
)


class _Run:
    def __init__(self, lake: Lakehouse):
        self.lake = lake
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.made: dict[str, int] = {}  # table -> version its create was acknowledged at
        self.rollbacks: list[tuple[int, int]] = []  # (target, version)
        self.expirations = 0
        self.exports: set[str] = set()
        self.lock = threading.Lock()

    def loop(self, name: str, step) -> None:
        rng = random.Random(name)
        while not self.stop.is_set():
            try:
                step(rng)
            except REFUSALS:
                pass
            except Exception as exc:  # reported: the test fails on any
                with self.lock:
                    self.errors.append(f"{name}: {type(exc).__name__}: {exc}")
                self.stop.set()


def _writer(run: _Run, prefix: str):
    counter = iter(range(10**9))

    def step(rng: random.Random) -> None:
        name = f"{prefix}{next(counter)}"
        version = run.lake.create_table("ns", name, {"properties": {"by": prefix}})
        with run.lock:
            run.made[name] = version

    return step


def _roller(run: _Run):
    def step(rng: random.Random) -> None:
        lake = run.lake
        oldest = lake.oldest_version()
        target = oldest + rng.randrange(3)  # right where expiration is cutting
        run.rollbacks.append((target, lake.rollback(target)))
        time.sleep(0.05)

    return step


def _expirer(run: _Run):
    def step(rng: random.Random) -> None:
        run.lake.expire(max_age_millis=0, min_versions=2 + rng.randrange(3), grace_millis=0)
        run.expirations += 1
        time.sleep(0.02)

    return step


def _exporter(run: _Run):
    counter = iter(range(10**9))

    def step(rng: random.Random) -> None:
        lake = run.lake
        name = f"e{next(counter)}"
        mode = rng.choice(["minimal", "partial"])
        lake.export(name, version=lake.oldest_version() + rng.randrange(2), mode=mode)
        with run.lock:
            run.exports.add(name)
        if len(run.exports) > 3:
            victim = sorted(run.exports)[0]
            lake.drop_export(victim)
            with run.lock:
                run.exports.discard(victim)
        time.sleep(0.05)

    return step


def _distributed(run: _Run):
    counter = iter(range(10**9))

    def step(rng: random.Random) -> None:
        txn = run.lake.begin_distributed()
        name = f"d{next(counter)}"
        txn.create_table("ns", name, {"properties": {"by": "dtxn"}})
        txn.save()
        time.sleep(rng.random() * 0.3)  # its base gets old meanwhile
        version = run.lake.load_distributed(txn.id).commit()
        with run.lock:
            run.made[name] = version

    return step


@pytest.mark.stress
def test_one_handle_shared_by_commits_rollbacks_exports_and_expiration(tmp_path) -> None:
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options=NO_FSYNC, txn_ttl_millis=TTL_MILLIS, **FAST_TREE)
    make_history(lake, 30, tables=20)
    with expiring_later():  # version 0, before the namespace, is no rollback target
        lake.expire(max_age_millis=0, min_versions=20, grace_millis=0)
    run = _Run(lake)
    steps = {
        "w1": _writer(run, "a"),
        "w2": _writer(run, "b"),
        "rollback": _roller(run),
        "expire": _expirer(run),
        "export": _exporter(run),
        "dtxn": _distributed(run),
    }
    threads = [threading.Thread(target=run.loop, args=(n, s)) for n, s in steps.items()]
    for t in threads:
        t.start()
    run.stop.wait(SECONDS)
    run.stop.set()
    for t in threads:
        t.join(timeout=120)
    assert not run.errors, run.errors
    assert run.expirations > 0 and run.rollbacks and run.made

    fresh = Lakehouse.open(url, storage_options=NO_FSYNC)
    oldest, latest = fresh.oldest_version(), fresh.latest_version()
    for version in range(oldest, latest + 1):  # no kept root names a swept file
        try:
            read_fully(fresh, version)
        except StorageFileNotFoundError as exc:
            raise AssertionError(f"version {version} of {oldest}..{latest}: {exc}") from None
    for name, version in run.made.items():
        if version >= oldest:
            assert name in fresh.at(version).list_tables("ns"), (name, version)
    for target, version in run.rollbacks:
        if target >= oldest and version >= oldest:
            assert fresh.at(version).list_tables("ns") == fresh.at(target).list_tables("ns")
    for export in fresh.exports():
        read_fully(fresh, export=export.name)
    report = fresh.fsck()
    assert report.ok, report.errors[:5]
