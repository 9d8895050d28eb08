"""`Lakehouse.fsck()` on a handle that had read the lakehouse (any long-running process:
a server, a notebook) took node files and lakehouse definitions from the handle's cache
of immutable files: a node file deleted or damaged in storage since was not reported,
and fsck said ok. Only a fresh handle (the CLI) saw it. Now fsck reads every node and
lakehouse definition from storage."""

from __future__ import annotations

import glob
import os

import pytest

from trinityfs import Lakehouse

SMALL_TREE = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 2500,
}


@pytest.fixture
def warm(tmp_path) -> tuple[Lakehouse, str]:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, **SMALL_TREE)
    lake.create_namespace("ns")
    for i in range(30):
        lake.create_table("ns", f"t{i:02d}")
    assert lake.fsck().ok  # every file is in the handle's cache now
    return lake, root


def _nodes(root: str) -> list[str]:
    found = sorted(glob.glob(os.path.join(root, "*", "*", "*", "*-node-*.arrow")))
    assert found
    return found


def test_a_node_file_deleted(warm) -> None:
    lake, root = warm
    gone = _nodes(root)[0]
    os.remove(gone)
    report = lake.fsck()
    assert not report.ok
    assert any(os.path.basename(gone) in p.location + p.message for p in report.errors)


def test_a_node_file_damaged(warm) -> None:
    lake, root = warm
    node = _nodes(root)[0]
    with open(node, "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    report = lake.fsck()
    assert not report.ok


def test_a_lakehouse_definition_deleted(warm) -> None:
    lake, root = warm
    for ldef in glob.glob(os.path.join(root, "_lakehouse_def_*.binpb")):
        os.remove(ldef)
    report = lake.fsck()
    assert not report.ok
    assert any("_lakehouse_def_" in p.location + p.message for p in report.errors)
