"""Content-hash names and rows checksums (trinityfs/format/integrity.py)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import trinityfs.format.integrity as integrity
from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.definitions import NamespaceDef, decode_definition, encode_definition
from trinityfs.format.integrity import (
    ROWS_DIGEST_KEY,
    check_file_bytes,
    has_content_name,
    name_hash,
    verify_named_content,
)
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import (
    new_definition_location,
    new_lakehouse_def_location,
    new_node_location,
    root_node_file,
)
from trinityfs.storage import Storage

LEGACY = Path(__file__).parent / "integrity" / "legacy_lake_937923f"


def _node() -> NodeFile:
    return NodeFile(system={"created_at_millis": "5"}, keys=["k1"], values=["a/b.binpb"])


def test_names_carry_a_version_8_uuid_with_hash_tag_and_random_part():
    data = encode_definition(NamespaceDef(id="x"))
    a, b = new_lakehouse_def_location(data), new_lakehouse_def_location(data)
    assert a != b  # identical content never reuses a name
    assert name_hash(a) == name_hash(b) is not None
    ua = uuid.UUID(a[len("_lakehouse_def_") : -len(".binpb")])
    assert ua.version == 8 and ua.variant == uuid.RFC_4122
    assert name_hash(new_lakehouse_def_location(data + b"!")) != name_hash(a)


@pytest.mark.parametrize(
    "location",
    [
        f"0000/0000/0000/00000000-node-{uuid.uuid4()}.arrow",  # older trinityfs: uuid4
        f"_lakehouse_def_{uuid.uuid4()}.binpb",
        "_export_e1.arrow",
        root_node_file(3),
        # a version 8 UUID of another writer, without the scheme tag
        f"0000/0000/0000/00000000-node-{uuid.UUID(int=(8 << 76) | (2 << 62))}.arrow",
    ],
)
def test_other_names_are_opaque(location):
    assert not has_content_name(location)
    assert verify_named_content(location, b"anything") is False


def test_every_byte_of_a_named_file_is_verified():
    data = encode_node(_node(), 4)
    loc = new_node_location(data)
    assert decode_node(data, 4, loc).keys == ["k1"]
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0x10
        with pytest.raises(CorruptFileError) as err:
            decode_node(bytes(flipped), 4, loc)
        assert err.value.path == loc
    for damaged in (b"", data[:-1], data[: len(data) // 2]):
        with pytest.raises(CorruptFileError):
            check_file_bytes(loc, damaged)


def _hash_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = integrity._content_bits

    def counting(data: bytes) -> int:
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(integrity, "_content_bits", counting)
    return calls


def test_a_node_file_read_then_decoded_is_hashed_once(tmp_path, monkeypatch):
    """The read checks the bytes before caching them and the decoder checks them again:
    the same bytes object under the same name is hashed once."""
    data = encode_node(_node(), 4)
    loc = new_node_location(data)
    Storage(str(tmp_path)).write(loc, data)
    storage = Storage(str(tmp_path))  # nothing cached yet
    calls = _hash_calls(monkeypatch)
    read = storage.read_immutable(loc)
    assert decode_node(read, 4, loc).keys == ["k1"]
    assert calls == [len(data)]


def test_only_the_same_immutable_object_under_the_same_name_skips_the_hash(monkeypatch):
    data = encode_node(_node(), 4)
    loc = new_node_location(data)
    calls = _hash_calls(monkeypatch)
    assert verify_named_content(loc, data) and verify_named_content(loc, data)
    assert len(calls) == 1
    assert verify_named_content(loc, bytes(bytearray(data)))  # an equal, other object
    assert len(calls) == 2
    other = new_node_location(data + b"x")  # the same object under another name
    with pytest.raises(CorruptFileError):
        verify_named_content(other, data)
    mutable = bytearray(data)  # never remembered: it can change under the same identity
    assert verify_named_content(loc, mutable)
    mutable[-1] ^= 1
    with pytest.raises(CorruptFileError):
        verify_named_content(loc, mutable)


def test_definitions_are_verified_and_never_empty():
    data = encode_definition(NamespaceDef(id="n", properties={"a": "b"}))
    loc = new_definition_location("namespace", "ns", None, data)
    assert decode_definition(data, NamespaceDef, loc).properties["a"] == "b"
    with pytest.raises(CorruptFileError, match="NamespaceDef"):
        decode_definition(data.replace(b"b", b"c"), NamespaceDef, loc)
    with pytest.raises(CorruptFileError, match="0 bytes"):
        decode_definition(b"", NamespaceDef, f"ns-{uuid.uuid4()}.binpb")


def test_roots_carry_a_rows_checksum_in_schema_metadata():
    data = encode_node(_node(), 4)
    schema = pa.ipc.open_file(pa.py_buffer(data)).schema
    assert ROWS_DIGEST_KEY in schema.metadata
    assert schema.names == ["key", "value", "pnode", "txn"]  # FORMAT.md's columns only
    root = root_node_file(1)
    flipped = data.replace(b"k1", b"k2")
    assert flipped != data
    with pytest.raises(CorruptFileError, match="checksum") as err:
        decode_node(flipped, 4, root)
    assert err.value.path == root


def test_a_root_without_checksum_still_reads():
    """Other writers and older trinityfs write no metadata: structural checks only."""
    table = pa.ipc.open_file(pa.py_buffer(encode_node(_node(), 4))).read_all()
    sink = pa.BufferOutputStream()
    plain = table.schema.remove_metadata()
    with pa.ipc.new_file(sink, plain) as writer:
        writer.write_table(table.cast(plain))
    assert decode_node(sink.getvalue().to_pybytes(), 4, root_node_file(1)).keys == ["k1"]


def test_lakehouse_written_by_937923f_reads_checks_and_takes_commits(tmp_path):
    url = tmp_path / "legacy"
    shutil.copytree(LEGACY, url)
    lake = Lakehouse.open(str(url))
    assert lake.latest_version() == 15
    assert lake.list_tables("ns") == [f"t{i:02d}" for i in range(12) if i != 3]
    assert lake.describe_table("ns", "t07").properties["n"] == "7"
    report = lake.fsck()
    assert report.ok, report.errors
    assert report.unverified_files > 0  # nothing in it carries a hash or checksum
    lake.create_table("ns", "new")
    assert "new" in lake.list_tables("ns")
    assert lake.fsck().ok
