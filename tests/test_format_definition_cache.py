"""The decoded-lakehouse-definition cache: each transaction begins by reading its
lakehouse definition; bytes already decoded and validated are not decoded again, while
any other bytes (a lying file, another lakehouse's) still pass every check."""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format import definitions
from trinityfs.format.definitions import (
    LakehouseDef,
    encode_definition,
    known_lakehouse_def,
    new_lakehouse_def,
    remember_lakehouse_def,
)


def _ldef_location(lake: Lakehouse) -> str:
    root = lake.engine.roots.load(lake.latest_version())
    return root.system["lakehouse_def"]


def test_a_lakehouse_definition_is_decoded_once_per_process(lake, monkeypatch):
    lake.create_namespace("ns")
    decoded = []
    real = definitions.decode_definition

    def counting(data, cls, path):
        decoded.append(path)
        return real(data, cls, path)

    monkeypatch.setattr(definitions, "decode_definition", counting)
    for i in range(5):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    # the old code decoded (and re-validated) it at the start of every transaction
    assert decoded == []
    assert lake.engine.snapshot().lakehouse_def.order == 128


def test_a_returned_definition_is_the_callers_own_copy(lake):
    first = lake.engine.snapshot().lakehouse_def
    first.order = 3
    first.properties["node-file.compression"] = "lz4"
    again = lake.engine.snapshot().lakehouse_def
    assert again.order == 128
    assert again.properties["node-file.compression"] == "zstd"
    assert again is not first


def test_remembering_keeps_a_copy_not_the_callers_message():
    ldef = new_lakehouse_def(id="cache-copy-test")
    data = encode_definition(ldef)
    remember_lakehouse_def("defs/copy.binpb", data, ldef)
    ldef.order = 5
    assert known_lakehouse_def("defs/copy.binpb", data).order == 128


def test_only_the_same_bytes_at_the_same_location_are_known():
    ldef = new_lakehouse_def(id="cache-key-test")
    data = encode_definition(ldef)
    remember_lakehouse_def("defs/key.binpb", data, ldef)
    assert known_lakehouse_def("defs/key.binpb", data) == ldef
    assert known_lakehouse_def("defs/key.binpb", bytes(data)) == ldef  # equal bytes
    assert known_lakehouse_def("defs/other.binpb", data) is None
    flipped = bytearray(data)
    flipped[-1] ^= 1
    assert known_lakehouse_def("defs/key.binpb", bytes(flipped)) is None
    assert known_lakehouse_def("defs/key.binpb", flipped) is None  # not bytes: decode


def test_a_definition_file_replaced_on_disk_is_still_refused(tmp_path):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url)
    lake.create_namespace("ns")
    location = _ldef_location(lake)
    path = os.path.join(url, *location.split("/"))
    with open(path, "rb") as f:
        data = f.read()
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x04
    with open(path, "wb") as f:
        f.write(bytes(flipped))
    # a new handle in the same process: the decoded copy of the good bytes must not
    # stand in for the bytes storage holds now
    with pytest.raises(CorruptFileError):
        Lakehouse.open(url).create_namespace("other")


def test_an_invalid_definition_is_never_remembered(tmp_path, monkeypatch):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url)
    location = _ldef_location(lake)
    data = lake.engine.storage.read_immutable(location)
    definitions._CHECKED_LAKEHOUSE_DEFS.clear()
    bad = LakehouseDef()
    bad.CopyFrom(known_lakehouse_def(location, data) or LakehouseDef.FromString(data))
    bad.order = 1  # decodes, but validation refuses it

    monkeypatch.setattr(definitions, "decode_definition", lambda d, cls, p: bad)
    # read from storage, a definition validation refuses is a corrupt file
    with pytest.raises(CorruptFileError, match="order"):
        Lakehouse.open(url).engine.snapshot()
    assert known_lakehouse_def(location, data) is None
    with pytest.raises(CorruptFileError, match="order"):  # checked again, not cached
        Lakehouse.open(url).engine.snapshot()
