"""The rows after a root's system rows are kept from one commit's root to the next
(format/node_encode.py `_bodies`, format/ipcfile.py `Body`): every node file written that
way must be byte for byte the file written from scratch, through buffer flushes, node
splits, deletes, property updates, a rollback and a change of system rows' lengths."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.format import ipcfile, node_encode
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.txn import publish

MEMOS = {
    "_checked_tables": (),
    "_checked_buffers": (),
    "_checked_messages": {},
    "_table_segments": (),
    "_buffer_segments": (),
    "_bodies": (),
}


def _from_scratch(node, order, compression):
    saved = {name: getattr(node_encode, name) for name in MEMOS}
    for name, empty in MEMOS.items():
        setattr(node_encode, name, type(empty)())
    try:
        return encode_node(node, order, compression=compression)
    finally:
        for name, value in saved.items():
            setattr(node_encode, name, value)


@pytest.fixture
def recorded(monkeypatch):
    """Every root a commit encodes: (node file, order, compression, bytes written)."""
    roots: list[tuple] = []
    real = publish.encode_node

    def recording(node, order, *, compression=None):
        data = real(node, order, compression=compression)
        roots.append((node, order, compression, data))
        return data

    monkeypatch.setattr(publish, "encode_node", recording)
    return roots


@pytest.mark.parametrize("compression", ["zstd", "lz4", None])
def test_kept_bodies_write_the_same_bytes_as_from_scratch(tmp_path, recorded, compression):
    lake = Lakehouse.create(
        str(tmp_path / "lake"),
        storage_options={"fsync": False},
        order=4,
        node_file_max_size_bytes=8192,
        properties={"node-file.compression": compression or "none"},
    )
    lake.create_namespace("ns", {"p": "0"})
    assert recorded[-1][2] == compression
    lake.create_namespace("other")
    for i in range(60):
        lake.create_table("ns", f"t{i:03d}", {"table_format": "ICEBERG"})
        if i % 7 == 3:
            lake.drop_table("ns", f"t{i - 2:03d}")
        if i % 5 == 0:
            lake.set_namespace_properties("ns", {"p": str(i), f"q{i}": "x" * i})
        if i % 11 == 10:
            lake.create_table("other", f"long-{'n' * (i + 30)}", {"table_format": "ICEBERG"})
    mark = lake.latest_version()
    for i in range(5):
        lake.create_table("ns", f"after{i}", {"table_format": "ICEBERG"})
    lake.rollback(mark)
    for i in range(25):  # the version numbers pass 99 and 999: longer system rows
        lake.create_table("ns", f"z{i:03d}", {"table_format": "ICEBERG"})
    assert len(recorded) > 100
    repeated = 0
    for node, order, comp, data in recorded:
        assert data == _from_scratch(node, order, comp)
        decoded = decode_node(data, order, "root")
        assert decoded.buffer == node.buffer and decoded.keys == node.keys
        repeated += 1
    assert repeated == len(recorded)


def test_a_root_after_a_kept_body_converts_only_its_new_messages(tmp_path, recorded, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "first", {"table_format": "ICEBERG"})
    converted: list[int] = []
    real = node_encode.segment

    def counting(columns):
        converted.append(len(columns[0]))
        return real(columns)

    monkeypatch.setattr(node_encode, "segment", counting)
    bodies = []
    real_write = node_encode.write_with_body

    def spying(system, body, tail, compression, fallback):
        bodies.append(tail is not None)
        return real_write(system, body, tail, compression, fallback)

    monkeypatch.setattr(node_encode, "write_with_body", spying)
    for i in range(5):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    # each root: its system rows and its one new message; the key table and the older
    # messages come from the previous root's kept body
    assert bodies == [True] * 5
    n_sys = len(recorded[-1][0].system) + 1  # n_keys is added by the encoder
    assert converted == [n_sys, 1] * 5


def test_moved_offsets_of_a_shorter_head_equal_fresh_ones():
    part = ipcfile.segment([["ab", "cde", None], ["x", None, "yz"], [None] * 3, ["1", "2", "3"]])
    for base in (0, 5, 1000):
        for new_base in (0, 3, 5, 999, 2000):
            moved = ipcfile._shifted(ipcfile._shifted(part.ends[0], 3, base), 3, new_base - base)
            assert moved == ipcfile._shifted(part.ends[0], 3, new_base)
