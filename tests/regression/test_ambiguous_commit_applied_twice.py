"""Regression (issue 10, item 6): after AmbiguousWriteError (the root landed, reading it
back failed) the transaction stayed open; committing again reported a conflict with its
own version, and a caller that redid the change applied it twice. A transaction whose
commit outcome is unknown is settled (committed or not) before it is retried or reused.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, StorageError, TransactionClosedError
from trinityfs.format.paths import parse_root_node_file
from trinityfs.storage import Storage


def _flaky(monkeypatch, *, landed: bool, failing_reads: int) -> list[str]:
    """The next root create lands (or not) but answers ambiguously, and the next
    `failing_reads` reads of that root fail."""
    real_create, real_read = Storage.create_if_absent, Storage.read
    state = {"armed": True, "reads": 0, "root": None}
    log: list[str] = []

    def create(self, loc, data, **kwargs):  # kwargs: first_durable (the commit's flush)
        if parse_root_node_file(loc) is not None and (state["armed"] or loc == state["root"]):
            if state["armed"] and landed:
                real_create(self, loc, data, **kwargs)
            state["armed"] = False
            state["root"] = loc
            log.append(loc)
            if landed and len(log) > 1:
                return real_create(self, loc, data, **kwargs)  # later attempts: "already exists"
            raise AmbiguousWriteError(f"injected: outcome of {loc} unknown")
        return real_create(self, loc, data, **kwargs)

    def read(self, loc):
        if loc == state["root"] and state["reads"] < failing_reads:
            state["reads"] += 1
            raise StorageError(f"injected: read of {loc} failed")
        return real_read(self, loc)

    monkeypatch.setattr(Storage, "create_if_absent", create)
    monkeypatch.setattr(Storage, "read", read)
    return log


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "counter", {"properties": {"n": "0"}})
    return lake


def test_commit_again_after_an_ambiguous_commit_that_landed(tmp_path, monkeypatch) -> None:
    lake = _lake(tmp_path)
    before = lake.latest_version()
    _flaky(monkeypatch, landed=True, failing_reads=100)
    txn = lake.transaction()
    txn.replace_table("ns", "counter", {"properties": {"n": "1"}})
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    monkeypatch.undo()  # the store answers again
    assert txn.commit() == before + 1  # settled: it had landed, nothing applied twice
    assert lake.latest_version() == before + 1
    with pytest.raises(TransactionClosedError, match="committed as version"):
        txn.replace_table("ns", "counter", {"properties": {"n": "2"}})


def test_commit_again_after_an_ambiguous_commit_that_did_not_land(tmp_path, monkeypatch) -> None:
    lake = _lake(tmp_path)
    before = lake.latest_version()
    _flaky(monkeypatch, landed=False, failing_reads=100)
    txn = lake.transaction()
    txn.create_table("ns", "once")
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    monkeypatch.undo()
    assert txn.commit() == before + 1  # it had not landed: committed now, once
    assert lake.list_tables("ns") == ["counter", "once"]
    assert lake.latest_version() == before + 1


def test_settle_tells_the_outcome(tmp_path, monkeypatch) -> None:
    lake = _lake(tmp_path)
    _flaky(monkeypatch, landed=True, failing_reads=100)
    txn = lake.transaction()
    txn.create_table("ns", "t")
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    with pytest.raises(AmbiguousWriteError):
        txn.txn.settle()  # still unknown while reads fail
    monkeypatch.undo()
    assert txn.txn.settle() == lake.latest_version()
