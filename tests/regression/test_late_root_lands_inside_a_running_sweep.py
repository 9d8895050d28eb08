"""A root that lands late (its writer paused past the commit window) while an
expiration is between deciding what to sweep and deleting it: the expiration decided
from roots that did not include the late one, so the late commit's own new files were
garbage to it; the committer's check (9a22b86) ran right after its root landed, found
every file, and acknowledged the commit; the sweep deleted them afterwards. The
acknowledged version did not read (StorageFileNotFoundError) and fsck failed.

Now two things close it (docs/LIFECYCLE.md, "A writer that pauses past the window"):
- the sweep issues each delete within `SWEEP_DECISION_MILLIS` of a look at the latest
  version, marking the roots that landed since first (what they use is spared);
- a root that landed late checks its files twice: at once, and again after
  `LATE_RECHECK_SECONDS`, by which time every delete decided before it landed has
  been issued; a swept file is written back (or the version undone).

The interleaving is forced with hooks: the expiration runs in a thread and stops at a
chosen point until the late root landed and its first check ran."""

from __future__ import annotations

import importlib
import threading

from late_commits import PAUSE_MS, assert_whole, jumping_clocks, small_lake

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.storage import Storage
from trinityfs.txn.roots import RootStore

# the package exports a function of the same name
expire_module = importlib.import_module("trinityfs.lifecycle.expire")
WAIT = 60  # seconds: a hook that waits longer than this failed


def _writer_pauses(monkeypatch) -> dict[str, int]:
    """The writer's clocks, moved forward by `jump` once it paused (10 minutes)."""
    return jumping_clocks(monkeypatch, transaction_module)


def _expiration_10_minutes_later(monkeypatch, url: str) -> tuple[threading.Thread, list]:
    """An expiration in a thread, whose clock runs 10 minutes ahead (every file the
    paused writer wrote is old to it)."""
    real_now = expire_module.now_millis
    monkeypatch.setattr(expire_module, "now_millis", lambda: real_now() + PAUSE_MS)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            Lakehouse.open(url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    return threading.Thread(target=run, name="expiration", daemon=True), errors


def _late_commit(lake, monkeypatch, expiration: threading.Thread, reached: threading.Event):
    """A transaction creating table late whose writer pauses right before its root's
    create; the expiration starts meanwhile and runs until `reached`; then the root
    lands (the writer's clocks 10 minutes on)."""
    jump = _writer_pauses(monkeypatch)
    txn = lake.transaction()
    txn.create_table("ns", "late", {"properties": {"k": "v"}})
    ours = set(txn.txn.files)
    real_create = RootStore.create

    def create_after_a_pause(self, version, data, *flush):
        if not jump["ms"]:
            expiration.start()
            assert reached.wait(WAIT), "the expiration never reached the hook"
            jump["ms"] = PAUSE_MS
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_a_pause)
    return txn, ours


def test_a_delete_decided_before_the_late_root_landed_is_written_back(tmp_path, monkeypatch):
    """The sweep is inside the delete of the late commit's definition when the root
    lands; the delete completes after the committer's first check."""
    lake = small_lake(tmp_path)
    expiration, errors = _expiration_10_minutes_later(monkeypatch, lake.url)
    in_delete, go, swept = threading.Event(), threading.Event(), threading.Event()
    ours: set[str] = set()
    real_delete = Storage.delete

    def delete(self, location, *args, **kwargs):
        if location in ours and threading.current_thread() is not threading.main_thread():
            in_delete.set()
            assert go.wait(WAIT), "the late commit never let the sweep go on"
            try:
                return real_delete(self, location, *args, **kwargs)
            finally:
                swept.set()
        return real_delete(self, location, *args, **kwargs)

    monkeypatch.setattr(Storage, "delete", delete)
    txn, files = _late_commit(lake, monkeypatch, expiration, in_delete)
    ours.update(files)

    def sweep_goes_on(seconds: float) -> None:  # the committer's wait before its recheck
        go.set()
        expiration.join(WAIT)

    monkeypatch.setattr(transaction_module, "_await_sweeps_in_flight", sweep_goes_on, raising=False)
    version = txn.commit()
    go.set()
    expiration.join(WAIT)
    monkeypatch.undo()
    assert swept.is_set() and not errors, errors
    assert_whole(lake, version)


def test_a_sweep_spares_the_files_of_a_root_that_landed_after_it_decided(tmp_path, monkeypatch):
    """The late root lands after the sweep chose its garbage and before it deletes
    anything; the committer does not check again (its wait is a no-op here): the sweep
    itself must see the new root."""
    lake = small_lake(tmp_path)
    expiration, errors = _expiration_10_minutes_later(monkeypatch, lake.url)
    decided, go = threading.Event(), threading.Event()
    real_find = expire_module.find_unreachable

    def find_then_wait(*args, **kwargs):
        sweep = real_find(*args, **kwargs)
        if threading.current_thread() is expiration:
            decided.set()
            assert go.wait(WAIT), "the late commit never let the sweep go on"
        return sweep

    monkeypatch.setattr(expire_module, "find_unreachable", find_then_wait)
    txn, ours = _late_commit(lake, monkeypatch, expiration, decided)
    monkeypatch.setattr(
        transaction_module, "_await_sweeps_in_flight", lambda seconds: None, raising=False
    )
    version = txn.commit()
    go.set()
    expiration.join(WAIT)
    monkeypatch.undo()
    assert not errors, errors
    assert all(lake.engine.storage.exists(loc) for loc in ours)
    assert_whole(lake, version)
