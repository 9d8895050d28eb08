"""A commit whose create of root v+1 "loses" (the store says the file exists) while the
latest version readers find stays v retried at once, forever: after PRIORITY_LOSSES
lost races the backoff waits 0, and the rebase found the same base, so each attempt
rebuilt the same root and lost again. A directory at the next root's name made every
commit spin 237,112 times in 120 s at 100% CPU and then fail naming no file (helper
adversary, 2026-11-24; that trigger is gone since 7a2dca8, the loop stayed); a rollback,
which has no budget, spun forever.

Now such losses, in a row at one version, are followed by a doubling jittered wait, and
after BLOCKED_LOSSES_MAX of them the commit raises RootBlockedError (a
CommitRetriesExhaustedError) naming the root file; nothing is committed. A winner that
shows up meanwhile ends it: the commit lands.

The store lies here: its create-if-absent says "exists" for the blocked root file without
creating anything (a conditional create that disagrees with reads)."""

from __future__ import annotations

import pytest

import trinityfs.txn.publish as publish
from trinityfs import Lakehouse
from trinityfs.errors import CommitRetriesExhaustedError
from trinityfs.format.paths import root_node_file
from trinityfs.storage.core import Storage

#: the old loop is stopped here (else it spins the whole budget, or forever)
SPIN_STOP = 200
EXPECTED_MAX = 8  # BLOCKED_LOSSES_MAX


class LyingCreates:
    """Storage.create_if_absent says "exists" for `name` (creating nothing) `times`
    times (None: always)."""

    def __init__(self, monkeypatch, name: str, times: int | None = None):
        self.name = name
        self.times = times
        self.lies = 0
        self.waits: list[float] = []
        real = Storage.create_if_absent
        lying = self

        def create_if_absent(self, loc, data, **kwargs):
            if loc == lying.name and (lying.times is None or lying.lies < lying.times):
                lying.lies += 1
                if lying.lies > SPIN_STOP:
                    raise AssertionError(f"{lying.lies} creates of {loc} in a row: spinning")
                return False
            return real(self, loc, data, **kwargs)

        monkeypatch.setattr(Storage, "create_if_absent", create_if_absent)
        monkeypatch.setattr(publish, "_sleep", self.waits.append, raising=False)


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t0")
    return lake


def _assert_blocked(info, version: int, lies: LyingCreates) -> None:
    assert lies.lies <= EXPECTED_MAX, f"{lies.lies} attempts at version {version}"
    assert type(info.value).__name__ == "RootBlockedError"
    assert isinstance(info.value, CommitRetriesExhaustedError)
    assert root_node_file(version) in str(info.value)
    assert "nothing was committed" in str(info.value)
    # a wait between every two attempts, each longer than the one before (jitter is
    # within a factor 2 and each doubles the base)
    assert len(lies.waits) == lies.lies - 1
    assert all(w > 0 for w in lies.waits)
    assert lies.waits[-1] > lies.waits[0]


def test_a_commit_blocked_at_one_version_backs_off_and_names_the_root(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    before = lake.latest_version()
    lies = LyingCreates(monkeypatch, root_node_file(before + 1))
    with pytest.raises(CommitRetriesExhaustedError) as info:
        lake.create_table("ns", "blocked")
    _assert_blocked(info, before + 1, lies)
    monkeypatch.undo()
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before
    assert "blocked" not in fresh.list_tables("ns")
    assert lake.create_table("ns", "after") == before + 1  # the store behaves again


def test_a_rollback_blocked_at_one_version_backs_off_and_names_the_root(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    before = lake.latest_version()
    lies = LyingCreates(monkeypatch, root_node_file(before + 1))
    with pytest.raises(CommitRetriesExhaustedError) as info:
        lake.rollback(before - 1)
    _assert_blocked(info, before + 1, lies)
    monkeypatch.undo()
    assert Lakehouse.open(lake.url).list_tables("ns") == ["t0"]


def test_a_winner_that_shows_up_late_ends_the_wait(tmp_path, monkeypatch):
    """Three creates lost with no winner visible, then the create works: it lands."""
    lake = _lake(tmp_path)
    before = lake.latest_version()
    lies = LyingCreates(monkeypatch, root_node_file(before + 1), times=3)
    assert lake.create_table("ns", "late") == before + 1
    assert lies.lies == 3
    assert len(lies.waits) == 3 and all(w > 0 for w in lies.waits)
    monkeypatch.undo()
    assert "late" in Lakehouse.open(lake.url).list_tables("ns")
