"""FUSE readdir of a namespace through the catalog's name columns (issue 13): the same
entries as the names listed one ObjectRef at a time, for names that need encoding,
tables and views together, and a name held as both kinds (listed once)."""

from __future__ import annotations

import pytest
from google.protobuf.message import Message

import trinityfs.catalog.reader as catalog_reader
from trinityfs import Lakehouse
from trinityfs.catalog.writer import CatalogTransaction
from trinityfs.format.definitions import encode_definition
from trinityfs.format.paths import new_definition_location
from trinityfs.format.trinitylake_pb2 import TableDef, ViewDef
from trinityfs.fs.paths import encode_name
from trinityfs.fuse.operations import TrinityOperations

NAMES = ["a/b", "%", ".", "..", "*", "q?", "[x]", "\u00e9t\u00e9", "zz", "..."]


def _put_raw(txn: CatalogTransaction, kind: str, name: str, msg: Message) -> None:
    """An object the catalog refuses to create but a lake written by another
    implementation may hold (a reserved name, a view beside a table of its name)."""
    data = encode_definition(msg)
    key = txn.keys.object_key(kind, "ns", name)
    txn.txn.put(key, new_definition_location(kind, "ns", name, data), data)


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    with lake.transaction() as txn:
        for i, name in enumerate(NAMES):
            if name in (".", ".."):  # reserved by the creation policy, not by the format
                _put_raw(txn, "table", name, TableDef(id=f"t-{len(name)}"))
            elif i % 3 == 1:
                txn.create_view("ns", name, {"properties": {"sql": "select 1"}})
            else:
                txn.create_table("ns", name, {"table_format": "ICEBERG"})
    return lake


def _names(entries: list) -> list[str]:
    assert entries[:2] == [(".", {"st_mode": entries[0][1]["st_mode"]}, 0)] * 1 + [
        ("..", {"st_mode": entries[1][1]["st_mode"]}, 0)
    ]
    return [e[0] for e in entries[2:]]


@pytest.mark.parametrize("read_only", [False, True])
def test_readdir_lists_every_name_encoded_in_name_order(lake, read_only):
    ops = TrinityOperations(lake, latest_ttl=0, prefetch_threads=0, read_only=read_only)
    entries = ops.readdir("/ns", 0)
    assert _names(entries) == [encode_name(n) for n in sorted(NAMES)]
    assert all(e[1]["st_mode"] & 0o170000 == 0o100000 and e[2] == 0 for e in entries[2:])
    pinned = TrinityOperations(lake, version=lake.latest_version(), prefetch_threads=0)
    assert _names(pinned.readdir("/v/latest/ns", 0)) == _names(entries)


def test_readdir_builds_no_object_ref_per_name(lake, monkeypatch):
    made = []
    real = catalog_reader.ObjectRef

    def counting(*args, **kwargs):
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog_reader, "ObjectRef", counting)
    ops = TrinityOperations(lake, latest_ttl=0, prefetch_threads=0)
    assert len(_names(ops.readdir("/ns", 0))) == len(NAMES)
    assert made == []


def test_a_name_held_as_table_and_view_is_listed_once_when_writable(lake):
    with lake.transaction() as txn:
        _put_raw(txn, "view", "zz", ViewDef(id="v-zz"))
    ops = TrinityOperations(lake, latest_ttl=0, prefetch_threads=0)
    assert _names(ops.readdir("/ns", 0)) == [encode_name(n) for n in sorted(NAMES)]
