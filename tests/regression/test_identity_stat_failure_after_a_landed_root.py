"""The stat that notes a new root's identity (to tell it from a lakehouse created again
in place, e580cf6) runs right after the root landed. Under storage faults it raised,
and a commit that had landed was reported failed: the history checker found a version
holding a failed op (tests/stress/test_history.py::test_history_under_storage_faults,
red in the session's CI of f8a16d8). Now the identity stays unknown and the commit is
acknowledged once."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import StorageError, TransactionClosedError
from trinityfs.format.paths import root_node_file
from trinityfs.storage import Storage


def test_a_failed_identity_stat_after_the_create_keeps_the_commit(tmp_path, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    new_root = root_node_file(lake.latest_version() + 1)
    real = Storage.identity
    failed: list[str] = []

    def failing_for_the_new_root(self, loc, **kwargs):
        if loc == new_root and not failed:  # the stat right after the create
            failed.append(loc)
            raise StorageError(f"injected: stat of {loc} failed")
        return real(self, loc, **kwargs)

    monkeypatch.setattr(Storage, "identity", failing_for_the_new_root)
    txn = lake.transaction()
    txn.create_table("ns", "t")
    version = txn.commit()
    assert failed == [new_root]
    with pytest.raises(TransactionClosedError):
        txn.commit()
    # the next commit builds on it: its identity is unknown, so existence decides
    lake.create_table("ns", "u")
    monkeypatch.undo()
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version + 1
    assert sorted(fresh.list_tables("ns")) == ["t", "u"]
