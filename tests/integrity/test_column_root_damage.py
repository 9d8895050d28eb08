"""A bulk-loaded root whose buffer is kept as Arrow columns (trinityfs/tree/columns.py)
takes a path of its own through decoding: damaged on storage (truncated, a bit flipped
anywhere), it must be refused like any root, by readers and by the commit that would
build on it, and nothing may be written over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from integrity_lakes import OPEN, stored_files

import trinityfs.txn.roots as roots
from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import root_node_file
from trinityfs.tree import TreeWriter
from trinityfs.tree.budget import FlushPolicy
from trinityfs.tree.columns import ColumnBuffer

TABLES = 400


@pytest.fixture
def column_root_lake(tmp_path: Path, monkeypatch) -> tuple[Path, int]:
    """(directory, version) of a lakehouse whose latest root holds a bulk load's
    buffer of TABLES messages, read back as a ColumnBuffer (thresholds lowered)."""
    monkeypatch.setattr(roots, "COLUMN_BUFFER_FROM", 200)
    monkeypatch.setattr(TreeWriter, "default_policy", FlushPolicy(rebuild_messages=200))
    path = tmp_path / "lake"
    lake = Lakehouse.create(str(path), **OPEN)
    lake.create_namespace("ns")
    with lake.bulk_load() as load:
        for i in range(TABLES):
            load.create_table("ns", f"t{i:04d}")
    version = lake.latest_version()
    fresh = Lakehouse.open(str(path), **OPEN)
    assert isinstance(fresh.engine.snapshot(version).root.buffer, ColumnBuffer)
    assert len(fresh.list_tables("ns")) == TABLES
    return path, version


def _truncate(keep: float):
    def damage(data: bytes) -> bytes:
        return data[: int(len(data) * keep)]

    return damage


def _flip(at: float):
    def damage(data: bytes) -> bytes:
        out = bytearray(data)
        out[min(int(len(out) * at), len(out) - 1)] ^= 0x04
        return bytes(out)

    return damage


DAMAGE = {
    "truncated to half": _truncate(0.5),
    "last byte missing": lambda data: data[:-1],
    **{f"bit flipped at {at:.0%}": _flip(at) for at in (0.1, 0.3, 0.5, 0.7, 0.9, 0.999)},
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_column_root_is_refused_and_nothing_is_written(column_root_lake, damage):
    """Refused, or - a flip in bytes that decoding never uses (Arrow's footer repeats the
    schema) - read exactly as written; never a wrong answer."""
    path, version = column_root_lake
    expected = Lakehouse.open(str(path), **OPEN).list_tables("ns")
    root_file = path / root_node_file(version)
    root_file.write_bytes(DAMAGE[damage](root_file.read_bytes()))
    before = stored_files(path)
    try:
        names = Lakehouse.open(str(path), **OPEN).list_tables("ns")
    except CorruptFileError as exc:
        assert root_node_file(version).rpartition("/")[2] in str(exc)
    else:
        assert names == expected, "a damaged root answered differently"
        assert damage.startswith("bit flipped"), "a truncated root was read"
        return
    with pytest.raises(CorruptFileError):
        Lakehouse.open(str(path), **OPEN).create_table("ns", "after")
    with pytest.raises(CorruptFileError), Lakehouse.open(str(path), **OPEN).bulk_load() as load:
        load.create_table("ns", "bulk_after")
    assert stored_files(path) == before
    assert Lakehouse.open(str(path), **OPEN).at(version=version - 1).list_namespaces()


def test_every_byte_of_the_key_and_message_columns_is_covered(column_root_lake):
    """A flip anywhere in the first nine tenths of the root (its record batch: system
    rows, key table, the buffer's columns) is refused: the ColumnBuffer path checks the
    rows it keeps as columns as strictly as the decode into messages does."""
    path, version = column_root_lake
    root_file = path / root_node_file(version)
    pristine = root_file.read_bytes()
    expected = Lakehouse.open(str(path), **OPEN).list_tables("ns")
    refused = tried = 0
    for at in range(64, int(len(pristine) * 0.9), max(1, len(pristine) // 97)):
        damaged = bytearray(pristine)
        damaged[at] ^= 0x04
        root_file.write_bytes(bytes(damaged))
        tried += 1
        try:
            names = Lakehouse.open(str(path), **OPEN).list_tables("ns")
        except CorruptFileError:
            refused += 1
        else:
            assert names == expected, f"a flip at byte {at} changed the answer"
    root_file.write_bytes(pristine)
    print(f"{refused} of {tried} flips refused")
    assert refused >= tried * 0.9
