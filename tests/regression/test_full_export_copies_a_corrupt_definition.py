"""Regression: a full export copied the definition files of its version without checking
them, so a definition whose bytes had rotted on storage (a bit flip, a truncation) was
copied into the export as is and the export was acknowledged: a backup that looks good
until the day it is read. Every other read of an immutable file checks its bytes against
the content hash in its name (format/integrity.py); the copy must too, and fail with
CorruptFileError naming the file, leaving neither a record nor files behind.
"""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError


def _newest_table_definition(root: str) -> str:
    files = [
        os.path.join(d, n)
        for d, _dirs, names in os.walk(root)
        for n in names
        if n.endswith(".binpb") and not n.startswith("_lakehouse_def")
    ]
    return max(files, key=os.path.getmtime)


@pytest.mark.parametrize("damage", ["bit flip", "truncated"])
def test_full_export_refuses_a_corrupt_definition(tmp_path, damage) -> None:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(5):
        lake.create_table("ns", f"t{i}", {"properties": {"gen": str(i)}})
    lake.replace_table("ns", "t0", {"properties": {"gen": "last"}})
    path = _newest_table_definition(root)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if damage == "bit flip":
        data[len(data) // 2] ^= 0x10
    else:
        del data[-3:]
    os.chmod(path, 0o644)
    with open(path, "wb") as f:
        f.write(bytes(data))

    fresh = Lakehouse.open(root, storage_options={"fsync": False})
    with pytest.raises(CorruptFileError) as caught:
        fresh.export("backup", mode="full")
    assert os.path.basename(path) in str(caught.value)
    assert fresh.exports() == []
    leftovers = [n for _d, _s, names in os.walk(os.path.join(root, "_exports")) for n in names]
    assert leftovers == []  # the copy's files are removed again: the name is free
    fresh.export("backup", mode="minimal")
