"""Issue 10 case 9: a one-byte flip in a key of a node file was obeyed, not detected.

At 937923f a bit flip that kept the keys in order (table `t02` -> `t03`) made listings
show a table that was never created and omit the real one, while fsck and the stress
suites' independent checker called the lakehouse clean. Now every node file is verified
(content hash in the name, rows checksum in roots): reads raise CorruptFileError naming
the file and the version, fsck and lakecheck report it.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import root_node_file
from trinityfs.fs.errors import to_os_error

SMALL_TREE = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 600,
    # uncompressed, so a key's bytes can be found and flipped in the file
    "properties": {"node-file.compression": "none"},
}


def _lake(tmp_path: Path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, **SMALL_TREE)
    lake.create_namespace("ns")
    for i in range(0, 40, 2):
        lake.create_table("ns", f"t{i:02d}")
    return lake


def _flip_key(path: Path, name: bytes) -> None:
    """Flip the lowest bit of the last byte of `name` where it appears as a key."""
    data = bytearray(path.read_bytes())
    at = data.find(b"ns" + b" " * 14 + name)
    assert at >= 0, f"{name!r} not in {path}"
    data[at + 16 + len(name) - 1] ^= 0x01
    path.write_bytes(bytes(data))


def _leaf_holding(lake: Lakehouse, table: str) -> str:
    """A non-root node whose key table holds `table`'s key."""
    version = lake.latest_version()
    storage = lake.storage
    todo = [root_node_file(version)]
    while todo:
        loc = todo.pop()
        nf = decode_node(storage.read(loc), None, loc)
        if loc != root_node_file(version) and any(k.endswith(table.ljust(16)) for k in nf.keys):
            return loc
        todo.extend(nf.children or ())
    raise AssertionError(f"no non-root node holds {table}")


def test_key_flip_in_a_node_is_an_error_naming_file_and_version(tmp_path):
    lake = _lake(tmp_path)
    version = lake.latest_version()
    leaf = _leaf_holding(lake, "t02")
    _flip_key(tmp_path / "lake" / leaf, b"t02")

    fresh = Lakehouse.open(str(tmp_path / "lake"))
    with pytest.raises(CorruptFileError) as err:
        fresh.list_tables("ns")
    assert err.value.path == leaf
    assert err.value.version == version
    assert leaf in str(err.value) and f"version {version}" in str(err.value)
    assert to_os_error(err.value).errno == errno.EIO

    report = fresh.fsck()
    assert not report.ok
    corrupt = [p for p in report.errors if p.location == leaf and p.kind == "corrupt"]
    assert corrupt, report.errors
    # reported per version: every kept version whose tree reaches the leaf
    assert version in corrupt[0].versions
    assert leaf in report.affected_versions[version]
    assert all(leaf in report.affected_versions[v] for v in corrupt[0].versions)


def test_key_flip_in_the_root_is_an_error(tmp_path):
    lake = _lake(tmp_path)
    lake.create_table("ns", "z01")  # the latest commit's message stays in the root
    version = lake.latest_version()
    root = root_node_file(version)
    _flip_key(tmp_path / "lake" / root, b"z01")

    fresh = Lakehouse.open(str(tmp_path / "lake"))
    with pytest.raises(CorruptFileError) as err:
        fresh.list_tables("ns")
    assert err.value.path == root and err.value.version == version
    with pytest.raises(CorruptFileError):  # no commit lands on the corrupt root
        fresh.create_table("ns", "after")
    assert not fresh.fsck().ok


def test_independent_checker_catches_key_flips(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stress"))
    from lakecheck import verify_files

    lake = _lake(tmp_path)
    assert verify_files(lake.storage) == []
    leaf = _leaf_holding(lake, "t04")
    _flip_key(tmp_path / "lake" / leaf, b"t04")
    problems = verify_files(lake.storage)
    assert [p[0] for p in problems] == [leaf]
