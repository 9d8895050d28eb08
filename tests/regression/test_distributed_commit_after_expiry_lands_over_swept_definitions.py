"""A distributed transaction's saved definitions (written by `save`) are kept by
expiration only through its transaction file, until expire_at_millis plus the grace
period. Committing checks the expiry before it creates the root, but a writer that
pauses between that check and the create (SIGSTOP, a suspended machine) landed a root
after the expiry, and an expiration run meanwhile had swept the saved definitions: the
acknowledged version named files that do not exist (describe_table raised
StorageFileNotFoundError, fsck failed). The late-commit check did not see them: they are
not among the files the committing process holds (`save` dropped them; a process that
`load`s the transaction never had them). Found by helper late (2026-11-24).

Now a root of a distributed transaction that lands at or after its expire_at_millis
checks its saved definitions too (at once and LATE_RECHECK_SECONDS later, like a root
landing past the commit window): present, the commit stands; gone, the version is undone
and TransactionExpiredError says nothing stays committed.

Real expiry (a short ttl, real time); the expiration runs "10 minutes later" by its own
clock (tests/expire_clock.py) so that the saved files look old to it."""

from __future__ import annotations

import time

import pytest
from expire_clock import expiring_later
from late_commits import small_lake

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import TransactionExpiredError
from trinityfs.txn.roots import RootStore

TTL_MILLIS = 1500


def _saved(lake: Lakehouse, loaded: bool):
    """A distributed transaction that created table "saved" and saved it; `loaded`:
    the one committing is another handle that loaded it (holds no file)."""
    dtxn = lake.begin_distributed(ttl_millis=TTL_MILLIS)
    dtxn.create_table("ns", "saved", {"properties": {"k": "v"}})
    dtxn.save()
    if loaded:
        dtxn = Lakehouse.open(lake.url).load_distributed(dtxn.id)
    return dtxn


def _pause_past_expiry(monkeypatch, lake: Lakehouse, dtxn, *, expire: bool) -> list[int]:
    """The root's create waits (really) until the transaction expired, then an
    expiration runs (with `expire`), then the create goes on."""
    real_create = RootStore.create
    paused: list[int] = []

    def create_after_expiry(self, version, data, *flush):
        if not paused:
            paused.append(version)
            while time.time() * 1000 <= dtxn.expire_at_millis + 50:
                time.sleep(0.05)
            if expire:
                with expiring_later(10):
                    Lakehouse.open(lake.url).expire(
                        max_age_millis=0, min_versions=1, grace_millis=0
                    )
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", create_after_expiry)
    return paused


def _assert_readable(lake: Lakehouse) -> Lakehouse:
    fresh = Lakehouse.open(lake.url)
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    return fresh


@pytest.mark.parametrize("loaded", [False, True], ids=["saved-here", "loaded"])
def test_a_distributed_commit_landing_after_expiry_over_swept_definitions(
    tmp_path, monkeypatch, loaded
):
    lake = small_lake(tmp_path)
    dtxn = _saved(lake, loaded)
    before = lake.latest_version()
    monkeypatch.setattr(transaction_module, "_await_sweeps_in_flight", lambda seconds: None)
    paused = _pause_past_expiry(monkeypatch, lake, dtxn, expire=True)
    with pytest.raises(TransactionExpiredError, match="nothing stays committed"):
        dtxn.commit()
    monkeypatch.undo()
    assert paused == [before + 1]
    fresh = _assert_readable(lake)
    assert fresh.latest_version() == before + 2  # the late version, then its undo
    assert "saved" not in fresh.list_tables("ns")
    assert dtxn.txn.committed_version is None


def test_a_distributed_commit_landing_after_expiry_with_its_files_stands(tmp_path, monkeypatch):
    """Nothing swept: the late root checks its saved definitions (and waits for sweeps
    in flight before checking again) and the commit stands."""
    lake = small_lake(tmp_path)
    dtxn = _saved(lake, loaded=True)
    before = lake.latest_version()
    waits: list[float] = []
    monkeypatch.setattr(transaction_module, "_await_sweeps_in_flight", waits.append)
    _pause_past_expiry(monkeypatch, lake, dtxn, expire=False)
    assert dtxn.commit() == before + 1
    monkeypatch.undo()
    assert len(waits) == 1  # it was checked as a late root
    fresh = _assert_readable(lake)
    assert fresh.latest_version() == before + 1
    assert fresh.describe_table("ns", "saved").properties["k"] == "v"
    assert fresh.fsck().ok


def test_a_distributed_commit_begun_after_expiry_is_refused(tmp_path):
    """Guard: committing after expire_at_millis is refused before anything is written."""
    lake = small_lake(tmp_path)
    dtxn = _saved(lake, loaded=False)
    before = lake.latest_version()
    while time.time() * 1000 <= dtxn.expire_at_millis + 50:
        time.sleep(0.05)
    with pytest.raises(TransactionExpiredError, match="nothing was committed"):
        dtxn.commit()
    assert Lakehouse.open(lake.url).latest_version() == before
