"""Lifecycle races with injected delays: expiration running at the worst moment of a
distributed commit and of an export (commit and rollback races: tests/regression)."""

from __future__ import annotations

from expire_clock import expiring_later
from lifecycle_helpers import NO_FSYNC, SMALL_TREE, make_history, read_fully

from trinityfs import Lakehouse
from trinityfs.txn.roots import RootStore


def test_expire_between_distributed_check_and_create(tmp_path, monkeypatch) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 20, tables=10)
    txn = lake.begin_distributed()
    txn.create_table("ns", "from_dtxn")
    txn.save()
    make_history(lake, 10, tables=10)  # the transaction's base is now old
    real_create = RootStore.create
    fired = []

    def racing_create(self, version, data, *flush):  # flush: the commit's first_durable
        if not fired:
            fired.append(version)
            with expiring_later():
                Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", racing_create)
    version = lake.load_distributed(txn.id).commit()
    monkeypatch.undo()
    assert fired
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert "from_dtxn" in fresh.list_tables("ns")
    read_fully(fresh, version)
    assert fresh.fsck().ok


def test_expire_between_export_copy_and_record(tmp_path, monkeypatch) -> None:
    from trinityfs.lifecycle import exports

    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 20, tables=10)
    real_record = exports._record
    fired = []

    def racing_record(engine, name, location):
        if not fired:
            fired.append(name)
            make_history(lake, 3, tables=10)
            with expiring_later():
                Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        return real_record(engine, name, location)

    monkeypatch.setattr(exports, "_record", racing_record)
    pinned = 15
    try:
        lake.export("pin", version=pinned)
    except Exception as exc:  # refused cleanly: the version was expired meanwhile
        assert "expired" in str(exc)
        assert "pin" not in [e.name for e in lake.exports()]
    else:
        read_fully(lake, export="pin")
    monkeypatch.undo()
    assert fired
    assert lake.fsck().ok
