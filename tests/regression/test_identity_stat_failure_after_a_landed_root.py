"""The identity of a new root (to tell it from a lakehouse created again in place,
e580cf6) is noted right after the root landed. Under storage faults the stat that noted
it raised, and a commit that had landed was reported failed: the history checker found
a version holding a failed op (tests/stress/test_history.py::test_history_under_storage_faults,
red in the session's CI of f8a16d8). Now the identity stays unknown and the commit is
acknowledged once. Since the identity comes from the create's own descriptor (an fstat,
not a stat of the name), both are failed here: the test fails on f8a16d8."""

from __future__ import annotations

import os
import types

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import StorageError, TransactionClosedError
from trinityfs.format.paths import root_node_file
from trinityfs.storage import Storage, local


class _FailingFstat(types.ModuleType):
    """`os` for local.py whose fstat fails (the create's descriptor)."""

    def __init__(self, failed: list[str]) -> None:
        super().__init__("os")
        self.failed = failed

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fstat(self, fd: int) -> os.stat_result:
        self.failed.append("fstat")
        raise OSError(5, "injected: fstat failed")


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
    monkeypatch.setattr(local, "os", _FailingFstat(failed))
    txn = lake.transaction()
    txn.create_table("ns", "t")
    version = txn.commit()
    assert failed[0] in (new_root, "fstat")  # the stat of its name, or (now) the fstat
    with pytest.raises(TransactionClosedError):
        txn.commit()
    monkeypatch.undo()
    # the next commit builds on it: its identity is unknown, so existence decides
    lake.create_table("ns", "u")
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version + 1
    assert sorted(fresh.list_tables("ns")) == ["t", "u"]
