"""A commit that lands late (its writer paused past the commit window) checks its files
at once and again LATE_RECHECK_SECONDS (5 s) later. A Ctrl-C (KeyboardInterrupt)
during that wait left the root LANDED but the transaction not marked committed:
`committed_version` stayed None and commit() again built on the same base, found it
late and raised CommitRetriesExhaustedError "... nothing was committed" although the
version had landed (an acknowledgement the other way round). Same for a commit whose
unknown outcome is settled late. Found by helper late (2026-11-24), repro in
/tmp/team/notes/late-ctrlc-repro.py.

Now the transaction is marked committed as soon as its root landed, before the late
check: commit() again raises TransactionClosedError naming the version, as after any
commit. When the late check undoes the version (files swept that cannot be written
back), `committed_version` is None again: nothing stays committed.

The pause is simulated: the writer's clocks jump 10 minutes at the pause point
(tests/regression/late_commits.py); the interrupt is raised from the wait."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later
from late_commits import PAUSE_MS, jumping_clocks, small_lake

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import (
    AmbiguousWriteError,
    CommitRetriesExhaustedError,
    TransactionClosedError,
    TransactionExpiredError,
)
from trinityfs.tree.store import NodeStore
from trinityfs.txn.roots import RootStore


def _interrupt(seconds: float) -> None:
    raise KeyboardInterrupt


def _second_commit_message(lake: Lakehouse) -> str:
    """What commit() again says after an ordinary commit (no pause): the reference."""
    txn = lake.transaction()
    txn.create_table("ns", "ordinary")
    version = txn.commit()
    with pytest.raises(TransactionClosedError) as info:
        txn.commit()
    assert str(info.value) == f"the transaction was committed as version {version}"
    return str(info.value).replace(str(version), "{version}")


def _late_create(monkeypatch, jump, *, reply_lost: bool = False) -> list[int]:
    """RootStore.create pauses 10 minutes (the writer's clocks jump) right before the
    create; with `reply_lost` the root lands but the create reports AmbiguousWriteError."""
    real_create = RootStore.create
    created: list[int] = []

    def create(self, version, data, *flush):
        jump["ms"] = PAUSE_MS
        landed = real_create(self, version, data, *flush)
        created.append(version)
        if reply_lost:
            raise AmbiguousWriteError("the reply to the root's create was lost (test)")
        return landed

    monkeypatch.setattr(RootStore, "create", create)
    return created


def _assert_landed_once(lake: Lakehouse, txn, version: int, reference: str) -> None:
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert "late" in fresh.list_tables("ns")
    assert txn.txn.committed_version == version
    try:
        again = txn.commit()
    except CommitRetriesExhaustedError as exc:  # the old lie: "nothing was committed"
        pytest.fail(f"commit() again after the landed version {version}: {exc}")
    except TransactionClosedError as exc:
        assert str(exc) == reference.format(version=version)
    else:
        assert again == version
    assert Lakehouse.open(lake.url).latest_version() == version  # nothing new committed


def test_ctrl_c_during_the_recheck_of_a_late_commit(tmp_path, monkeypatch):
    lake = small_lake(tmp_path)
    reference = _second_commit_message(lake)
    jump = jumping_clocks(monkeypatch, transaction_module)
    monkeypatch.setattr(transaction_module, "_await_sweeps_in_flight", _interrupt)
    created = _late_create(monkeypatch, jump)
    txn = lake.transaction()
    txn.create_table("ns", "late")
    with pytest.raises(KeyboardInterrupt):
        txn.commit()
    assert len(created) == 1
    _assert_landed_once(lake, txn, created[0], reference)


def test_ctrl_c_during_the_recheck_of_a_late_commit_settled_later(tmp_path, monkeypatch):
    lake = small_lake(tmp_path)
    reference = _second_commit_message(lake)
    jump = jumping_clocks(monkeypatch, transaction_module)
    monkeypatch.setattr(transaction_module, "_await_sweeps_in_flight", _interrupt)
    real_create = RootStore.create
    created = _late_create(monkeypatch, jump, reply_lost=True)
    txn = lake.transaction()
    txn.create_table("ns", "late")
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    monkeypatch.setattr(RootStore, "create", real_create)
    with pytest.raises(KeyboardInterrupt):  # settling finds it landed, late
        txn.commit()
    assert len(created) == 1
    _assert_landed_once(lake, txn, created[0], reference)


def test_a_late_commit_undone_by_its_recheck_claims_no_version(tmp_path, monkeypatch):
    """Guard: when the late check undoes the version, nothing claims it committed."""
    lake = small_lake(tmp_path)
    with lake.transaction() as first:  # a root holding this many flushes on the next batch
        for i in range(300):
            first.create_table("ns", f"first{i:04d}")
    before = lake.latest_version()
    jump = jumping_clocks(monkeypatch, transaction_module)
    real_create = RootStore.create

    def create_after_a_sweep(self, version, data, *flush):
        if jump["ms"]:  # paused once: the undo's create is not
            return real_create(self, version, data, *flush)
        with expiring_later(PAUSE_MS / 60_000):
            Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        jump["ms"] = PAUSE_MS
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_a_sweep)
    monkeypatch.setattr(NodeStore, "cached", lambda self, location: None, raising=False)
    txn = lake.transaction()
    for i in range(300):
        txn.create_table("ns", f"bulk{i:04d}")
    with pytest.raises(TransactionExpiredError, match="nothing stays committed"):
        txn.commit()
    monkeypatch.undo()
    assert Lakehouse.open(lake.url).latest_version() == before + 2  # late version, undo
    assert txn.txn.committed_version is None
    with pytest.raises(TransactionClosedError) as info:
        txn.commit()
    assert "committed as version" not in str(info.value)
