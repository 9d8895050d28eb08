"""Bad input gives a clear typed error and nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from trinityfs import Lakehouse
from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    InvalidNameError,
    LakehouseNotFoundError,
    UnsafeLocationError,
    UnsupportedFormatVersionError,
)
from trinityfs.format.definitions import encode_definition, new_lakehouse_def
from trinityfs.format.nodefile import COLUMNS, SCHEMA
from trinityfs.format.paths import LATEST_HINT, root_node_file


@pytest.fixture
def local(tmp_path) -> tuple[Lakehouse, Path]:
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root))
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    return lake, root


def test_open_missing_lakehouse(tmp_path) -> None:
    with pytest.raises(LakehouseNotFoundError, match="no lakehouse"):
        Lakehouse.open(str(tmp_path / "nothing"))


def test_invalid_lakehouse_options(tmp_path) -> None:
    with pytest.raises(InvalidArgumentError, match="order"):
        Lakehouse.create(str(tmp_path / "a"), order=2)
    with pytest.raises(InvalidArgumentError, match="key table"):
        Lakehouse.create(str(tmp_path / "b"), node_file_max_size_bytes=1000)
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").glob("_0*.arrow"))


@pytest.mark.parametrize("name", ["a b", "x" * 101, "", "del\x7f", "nl\n", "\udcff"])
def test_invalid_names_commit_nothing(local, name) -> None:
    lake, _ = local
    with pytest.raises(InvalidNameError):
        lake.create_table("ns", name)
    with pytest.raises(InvalidNameError), lake.transaction() as txn:
        txn.create_table("ns", "fine")
        txn.create_table("ns", name)
    assert lake.latest_version() == 2
    assert lake.list_tables("ns") == ["t"]


def test_unknown_major_version(local) -> None:
    lake, root = local
    ldef = new_lakehouse_def()
    ldef.major_version = 7
    (root / "_lakehouse_def_future.binpb").write_bytes(encode_definition(ldef))
    _write_root(root, 3, {"lakehouse_def": "_lakehouse_def_future.binpb"}, lake)
    with pytest.raises(UnsupportedFormatVersionError, match="7"):
        Lakehouse.open(str(root)).snapshot()


def test_truncated_root_names_the_file(local) -> None:
    _, root = local
    path = root / root_node_file(2)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CorruptFileError) as info:
        Lakehouse.open(str(root)).snapshot()
    assert root_node_file(2) in str(info.value)


def test_corrupt_definition_names_the_file(local) -> None:
    lake, root = local
    location = lake.snapshot().object_location("table", "ns", "t")
    (root / location).write_bytes(b"\xff\xfe garbage that is not protobuf \x00\x01")
    with pytest.raises(CorruptFileError) as info:
        Lakehouse.open(str(root)).describe_table("ns", "t")
    assert location in str(info.value)


@pytest.mark.parametrize("hint", [b"garbage", b"-4", b"99999999", b"", b"1e9", b"\xff"])
def test_malformed_hint_never_skips_versions(local, hint) -> None:
    _, root = local
    (root / LATEST_HINT).write_bytes(hint)
    assert Lakehouse.open(str(root)).latest_version() == 2


@pytest.mark.parametrize(
    "location", ["/etc/passwd", "../outside.binpb", "a/../../b", "s3://bucket/x", "file:///x"]
)
def test_locations_escaping_the_root_are_refused(local, location) -> None:
    lake, root = local
    key = lake.snapshot().keys.table_key("ns", "evil")
    _write_root(root, 3, {}, lake, extra_rows=[(key, location)])
    with pytest.raises(UnsafeLocationError):
        Lakehouse.open(str(root)).describe_table("ns", "evil")


def _write_root(root: Path, version: int, system: dict, lake: Lakehouse, extra_rows=()) -> None:
    """Hand-craft the root of `version` (a leaf holding `extra_rows`) with raw pyarrow."""
    base = lake.engine.roots.load(version - 1).system
    sys_rows = {**base, "previous_root": root_node_file(version - 1), **system}
    sys_rows["n_keys"] = str(len(extra_rows))
    rows = [(k, v, None, None) for k, v in sys_rows.items()]
    rows.append((None, None, None, None))
    rows += [(k, v, None, None) for k, v in extra_rows]
    order = lake.lakehouse_def().order
    rows += [(None, None, None, None)] * (order - 1 - len(extra_rows))
    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(COLUMNS)}, schema=SCHEMA)
    with pa.ipc.new_file(str(root / root_node_file(version)), SCHEMA) as writer:
        writer.write_table(table)
