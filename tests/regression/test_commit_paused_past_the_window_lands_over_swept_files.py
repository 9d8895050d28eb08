"""A writer that pauses after writing its files, for longer than the commit window
(SIGSTOP, a debugger, a swap storm; or a suspended laptop or VM, during which
CLOCK_MONOTONIC stands still while the wall clock moves), while an expiration runs:
expiration sweeps unreferenced files older than the window, so the writer's own new
definition and node files were gone when its root landed, and the acknowledged version
did not read (StorageFileNotFoundError; fsck errors). Found by helper audit
(2026-11-24).

Now: a budget check after a suspension refuses (the wall clock counts too); a root that
lands late writes back the definitions it holds, and when one of its node files was
swept, commits the base tree again on top and raises TransactionExpiredError.

The pause is simulated: the writer's clocks jump 10 minutes at the pause point, and the
expiration run there sees the same 10 minutes (tests/expire_clock.py)."""

from __future__ import annotations

import logging
import time

import pytest
from expire_clock import expiring_later
from late_commits import PAUSE_MS, small_lake

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import (
    CommitRetriesExhaustedError,
    StorageError,
    TransactionClosedError,
    TransactionExpiredError,
)
from trinityfs.storage import Storage
from trinityfs.tree.store import NodeStore
from trinityfs.txn.roots import RootStore
from trinityfs.txn.transaction import Transaction


class WriterClock:
    """The transaction module's clocks, moved forward by `jump` (wall) and
    `jump_monotonic` from the pause on."""

    def __init__(self, monkeypatch) -> None:
        self.wall = 0
        self.monotonic = 0.0
        real_now = transaction_module.now_millis
        clock = self

        class _Time:
            @staticmethod
            def monotonic() -> float:
                return time.monotonic() + clock.monotonic

        monkeypatch.setattr(transaction_module, "now_millis", lambda: real_now() + clock.wall)
        monkeypatch.setattr(transaction_module, "time", _Time)

    def pause(self, lake: Lakehouse, *, suspended: bool) -> None:
        """The writer stops here for 10 minutes; an expiration runs meanwhile."""
        with expiring_later(PAUSE_MS / 60_000):
            Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        self.wall += PAUSE_MS
        if not suspended:
            self.monotonic += PAUSE_MS / 1000


def _assert_whole(lake: Lakehouse) -> Lakehouse:
    fresh = Lakehouse.open(lake.url)
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    report = fresh.fsck()
    assert report.ok, report.errors[:3]
    return fresh


@pytest.mark.parametrize("suspended", [False, True], ids=["paused", "suspended"])
def test_a_root_landing_late_writes_back_its_swept_definitions(tmp_path, monkeypatch, suspended):
    lake = small_lake(tmp_path)
    clock = WriterClock(monkeypatch)
    real_create = RootStore.create
    paused: list[int] = []

    def create_after_a_pause(self, version, data, *flush):
        if not paused:
            paused.append(version)
            clock.pause(lake, suspended=suspended)
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_a_pause)
    version = lake.create_table("ns", "late", {"properties": {"k": "v"}})
    monkeypatch.undo()
    assert paused == [version]
    fresh = _assert_whole(lake)
    assert fresh.describe_table("ns", "late").properties["k"] == "v"
    assert fresh.latest_version() == version


def test_a_suspension_before_the_budget_check_refuses_the_commit(tmp_path, monkeypatch):
    lake = small_lake(tmp_path)
    clock = WriterClock(monkeypatch)
    before = lake.latest_version()
    real_check = Transaction._check_budget

    def check_after_a_suspension(self, version):
        clock.pause(lake, suspended=True)  # monotonic stands still: only the wall moves
        return real_check(self, version)

    monkeypatch.setattr(Transaction, "_check_budget", check_after_a_suspension)
    with pytest.raises(CommitRetriesExhaustedError, match="suspended machine"):
        lake.create_table("ns", "late")
    monkeypatch.undo()
    fresh = _assert_whole(lake)
    assert fresh.latest_version() == before
    assert "late" not in fresh.list_tables("ns")


def _late_batch(tmp_path, monkeypatch):
    """A 300-table commit that writes node files, paused before its root."""
    lake = small_lake(tmp_path)
    with lake.transaction() as first:  # a root holding this many flushes on the next batch
        for i in range(300):
            first.create_table("ns", f"first{i:04d}")
    clock = WriterClock(monkeypatch)
    real_create = RootStore.create
    written: list[list[str]] = []
    txn = lake.transaction()

    def create_after_a_pause(self, version, data, *flush):
        if not written:
            clock.pause(lake, suspended=False)
            written.append(list(getattr(txn.txn, "_written_nodes", ["(not recorded)"])))
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_a_pause)
    for i in range(300):
        txn.create_table("ns", f"bulk{i:04d}")
    return lake, txn, written


def test_a_late_root_writes_back_its_swept_node_files(tmp_path, monkeypatch):
    lake, txn, written = _late_batch(tmp_path, monkeypatch)
    version = txn.commit()
    monkeypatch.undo()
    assert written and written[0], "the commit wrote no node file: make it bigger"
    fresh = _assert_whole(lake)
    assert fresh.latest_version() == version
    assert len([n for n in fresh.list_tables("ns") if n.startswith("bulk")]) == 300


def test_a_late_root_whose_node_files_cannot_be_written_back_is_undone(tmp_path, monkeypatch):
    lake, txn, written = _late_batch(tmp_path, monkeypatch)
    before = lake.latest_version()
    monkeypatch.setattr(NodeStore, "cached", lambda self, location: None, raising=False)
    with pytest.raises(TransactionExpiredError, match=r"swept .*node-.*could not be written back"):
        txn.commit()
    monkeypatch.undo()
    assert written and written[0]
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before + 2  # the late version, then its undo
    assert not [n for n in fresh.list_tables("ns") if n.startswith("bulk")]
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    # what fsck finds is the late version alone (it stays in the history, unreadable)
    problems = fresh.fsck().errors
    affected = {v for p in problems for v in (p.version, *p.versions) if v is not None}
    assert problems and affected == {before + 1}, problems


def test_a_late_root_whose_check_fails_is_still_acknowledged_once(tmp_path, monkeypatch):
    """The root landed: a storage error while checking its files must not report the
    commit failed (the caller would commit the same changes again)."""
    lake = small_lake(tmp_path)
    clock = WriterClock(monkeypatch)
    real_create = RootStore.create
    txn = lake.transaction()
    txn.create_table("ns", "late")

    def create_after_a_pause_then_fail_checks(self, version, data, *flush):
        clock.pause(lake, suspended=False)
        created = real_create(self, version, data, *flush)

        def refused(*args, **kwargs):
            raise StorageError("the store refuses requests (test)")

        monkeypatch.setattr(Storage, "exists", refused)
        return created

    monkeypatch.setattr(RootStore, "create", create_after_a_pause_then_fail_checks)
    logged: list[str] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    transaction_module.log.addHandler(handler)
    try:
        version = txn.commit()
    finally:
        transaction_module.log.removeHandler(handler)
    monkeypatch.undo()
    assert any("run `trinityfs fsck`" in line for line in logged), logged
    with pytest.raises(TransactionClosedError):
        txn.commit()
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert "late" in fresh.list_tables("ns")
