"""Regression (issue 10, item 7): exports and distributed-transaction begin called
create-if-absent directly: a create that landed with an error was not settled, a retry
said "already exists" about the caller's own file, and the orphan transaction file
pinned expiration for its whole TTL. One mechanism settles every create-if-absent."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, StorageError, TrinityError
from trinityfs.format.paths import transaction_location
from trinityfs.storage import Storage


def _landed_but_ambiguous(monkeypatch, match, *, failing_reads: int = 0) -> list[str]:
    real_create, real_read = Storage.create_if_absent, Storage.read
    hits: list[str] = []
    reads = {"n": 0}

    def create(self, loc, data, **kwargs):  # kwargs: first_durable (a commit's flush)
        if not hits and match(self.url + loc):
            hits.append(loc)
            real_create(self, loc, data, **kwargs)
            raise AmbiguousWriteError(f"injected: {loc} landed, the reply was lost")
        return real_create(self, loc, data, **kwargs)

    def read(self, loc):
        if hits and loc == hits[0] and reads["n"] < failing_reads:
            reads["n"] += 1
            raise StorageError("injected: read failed")
        return real_read(self, loc)

    monkeypatch.setattr(Storage, "create_if_absent", create)
    monkeypatch.setattr(Storage, "read", read)
    return hits


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    return lake


@pytest.mark.parametrize("mode", ["minimal", "partial", "full"])
def test_export_whose_root_create_landed_ambiguously(lake, monkeypatch, mode) -> None:
    hits = _landed_but_ambiguous(
        monkeypatch, lambda loc: "export" in loc and loc.endswith(".arrow")
    )
    info = lake.export("e1", mode=mode)
    monkeypatch.undo()
    assert hits
    assert [e.name for e in lake.exports()] == ["e1"]
    assert lake.at(export="e1").list_namespaces() == ["ns"]
    assert info.version == lake.latest_version() - 1


def test_begin_whose_create_landed_ambiguously(lake, monkeypatch) -> None:
    hits = _landed_but_ambiguous(monkeypatch, lambda loc: "txn-" in loc)
    txn = lake.begin_distributed(txn_id="t1")
    monkeypatch.undo()
    assert hits
    txn.create_table("ns", "from_dtxn")
    txn.commit()
    assert "from_dtxn" in lake.list_tables("ns")


def test_retried_begin_recognizes_its_own_file(lake, monkeypatch) -> None:
    _landed_but_ambiguous(monkeypatch, lambda loc: "txn-" in loc, failing_reads=100)
    with pytest.raises(AmbiguousWriteError):
        lake.begin_distributed(txn_id="t2")
    monkeypatch.undo()
    txn = lake.begin_distributed(txn_id="t2")  # the same call again: not "already exists"
    txn.create_table("ns", "t2_table")
    txn.commit()
    assert "t2_table" in lake.list_tables("ns")


def test_failed_generated_begin_leaves_no_orphan(lake, monkeypatch) -> None:
    hits = _landed_but_ambiguous(monkeypatch, lambda loc: "txn-" in loc, failing_reads=100)
    with pytest.raises(TrinityError):
        lake.begin_distributed()
    monkeypatch.undo()
    assert hits and not lake.storage.exists(hits[0]), "an orphan transaction file pins expiry"
    assert transaction_location("x")  # the location scheme is still the format's
