"""A bulk load renews its lease right before creating its root; a process paused
between that renewal and the create for longer than the lease (SIGSTOP, a debugger, a
suspended machine) lets an expiration meanwhile take the lease for dead and sweep the
load's definition files, which no root referenced yet. The root then landed and the
load was acknowledged: a version whose tables did not read (StorageFileNotFoundError),
fsck errors.

Now a load whose root landed after its lease lapsed checks that its files survived
(once every delete decided before the root landed has been issued); the load holds no
definition bytes to write back, so when one is gone, the base tree is committed again
on top and TransactionExpiredError says nothing stays committed. The same check runs
when an unknown outcome (AmbiguousWriteError) is settled.

The pause is simulated: the load's clocks jump 10 minutes at the pause point, and the
expiration run there sees the same 10 minutes (tests/expire_clock.py)."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later
from late_commits import PAUSE_MS, jumping_clocks, small_lake

import trinityfs.catalog.bulk as bulk_module
from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, TransactionExpiredError
from trinityfs.txn.roots import RootStore

LEASE_MS = 60_000  # lapses during the pause; the expiration takes it for dead


def _paused_load(tmp_path, monkeypatch, *, reply_lost: bool):
    """A 40-table bulk load whose process pauses 10 minutes right before its root's
    create, while an expiration runs; with `reply_lost`, the create then reports an
    unknown outcome (the root landed)."""
    lake = small_lake(tmp_path, tables=3)
    jump = jumping_clocks(monkeypatch, bulk_module)
    monkeypatch.setattr(bulk_module, "_await_sweeps_in_flight", lambda s: None, raising=False)
    real_create = RootStore.create
    load = lake.bulk_load(lease_millis=LEASE_MS)
    for i in range(40):
        load.create_table("ns", f"bulk{i:03d}", {"properties": {"i": str(i)}})

    def create_after_a_pause(self, version, data, *flush):
        with expiring_later(PAUSE_MS / 60_000):
            Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        jump["ms"] = PAUSE_MS
        created = real_create(self, version, data, *flush)
        if reply_lost:
            raise AmbiguousWriteError("the reply to the root's create was lost (test)")
        return created

    monkeypatch.setattr(RootStore, "create", create_after_a_pause)
    return lake, load


def _assert_undone(lake: Lakehouse, before: int) -> None:
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before + 2  # the late version, then its undo
    assert sorted(fresh.list_tables("ns")) == ["t0", "t1", "t2"]
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    problems = fresh.fsck().errors  # the late version stays in the history, unreadable
    affected = {v for p in problems for v in (p.version, *p.versions) if v is not None}
    assert affected <= {before + 1}, problems


def test_a_load_landing_after_its_lease_lapsed_over_swept_files_is_undone(tmp_path, monkeypatch):
    lake, load = _paused_load(tmp_path, monkeypatch, reply_lost=False)
    before = lake.latest_version()
    with pytest.raises(TransactionExpiredError, match="lease"):
        load.commit()
    monkeypatch.undo()
    _assert_undone(lake, before)


def test_a_load_settled_after_its_lease_lapsed_over_swept_files_is_undone(tmp_path, monkeypatch):
    lake, load = _paused_load(tmp_path, monkeypatch, reply_lost=True)
    before = lake.latest_version()
    with pytest.raises(AmbiguousWriteError):
        load.commit()
    with pytest.raises(TransactionExpiredError, match="lease"):
        load.commit()  # settles: the root landed
    monkeypatch.undo()
    _assert_undone(lake, before)


def test_a_load_landing_late_whose_files_survived_is_acknowledged(tmp_path, monkeypatch):
    """Lapsed but no expiration swept anything (it kept every file: a long grace)."""
    lake = small_lake(tmp_path, tables=3)
    jump = {"ms": 0}
    real_now = bulk_module.now_millis
    monkeypatch.setattr(bulk_module, "now_millis", lambda: real_now() + jump["ms"])
    monkeypatch.setattr(bulk_module, "_await_sweeps_in_flight", lambda s: None, raising=False)
    real_create = RootStore.create
    load = lake.bulk_load(lease_millis=LEASE_MS)
    for i in range(40):
        load.create_table("ns", f"bulk{i:03d}")

    def create_after_a_pause(self, version, data, *flush):
        jump["ms"] = PAUSE_MS
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_a_pause)
    version = load.commit()
    monkeypatch.undo()
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert len(fresh.list_tables("ns")) == 43
    assert fresh.fsck().ok
