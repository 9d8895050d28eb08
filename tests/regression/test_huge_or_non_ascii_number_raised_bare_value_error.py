"""Numbers given as text that Python's int() refuses: more than 4,300 digits (a bare
ValueError "Exceeds the limit (4300 digits) for integer string conversion") or digits
that `str.isdigit` accepts and int() does not ("²"). Each place that checked `isdigit()`
and then called int() leaked that bare ValueError: a version selector, a node file that
lies about its numbers, mount options, CLI durations, the PyIceberg `timestamp`. Each is
now the typed error of its layer, naming the value."""

from __future__ import annotations

import argparse
import glob

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from regression_cli import run

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, InvalidArgumentError
from trinityfs.fs.spec import TrinityFileSystem
from trinityfs.fuse.mount import MountError, build_parser, config_from_args
from trinityfs.iceberg.properties import time_selector

HUGE = "9" * 5000


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.transaction() as txn:
        txn.create_namespace("ns", {})
    return lake


@pytest.mark.parametrize(
    "selector", [HUGE, "1" + "0" * 20, "9" * 4301], ids=["5000 digits", "2^66ish", "4301 digits"]
)
def test_a_huge_version_selector_is_invalid_argument(lake, selector):
    with pytest.raises(InvalidArgumentError, match=r"outside 0\.\.2\^64-1"):
        lake.resolve(selector)


def test_leading_zeros_still_select_the_version(lake):
    assert lake.resolve("0" * 5000 + "1").version == 1


def test_the_filesystem_reports_a_huge_version_as_no_such_path(lake):
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    with pytest.raises(FileNotFoundError, match=r"outside 0\.\.2\^64-1"):
        fs.ls(f"/v/{HUGE}/ns")


def _rewrite_root(root: str, change) -> None:
    """Rewrite version 1's root without its checksum (as another writer may write it)."""
    path = sorted(glob.glob(f"{root}/_1*.arrow"))[0]
    table = ipc.open_file(path).read_all()
    rows = table.to_pylist()
    for row in rows:
        change(row)
    plain = pa.Table.from_pylist(rows, schema=table.schema.remove_metadata())
    with open(path, "wb") as out, ipc.new_file(out, plain.schema) as writer:
        writer.write_table(plain)


def _txn(row):
    if row["txn"] is not None:
        row["txn"] = HUGE


def _system(name):
    def change(row):
        if row["key"] == name:
            row["value"] = HUGE

    return change


@pytest.mark.parametrize(
    "change",
    [_txn, _system("created_at_millis"), _system("n_keys")],
    ids=["txn", "created", "n_keys"],
)
def test_a_node_file_with_a_huge_number_is_corrupt(lake, change):
    root = lake.url.removeprefix("file://").rstrip("/")
    _rewrite_root(root, change)
    with pytest.raises(CorruptFileError) as caught:
        Lakehouse.open(root).at(1).list_namespaces()
    message = str(caught.value)
    assert "_1" in message and len(message) < 600


@pytest.mark.parametrize(
    "option", ["version=²", "prefetch=²", f"version={HUGE}"], ids=["version", "prefetch", "huge"]
)
def test_a_mount_option_that_is_no_number_is_a_mount_error(option):
    args = build_parser().parse_args(["/lake", "/mnt", "-o", option])
    with pytest.raises(MountError):
        config_from_args(args)


@pytest.mark.parametrize("value", ["²", HUGE, HUGE + "d"], ids=["superscript", "huge", "huge-d"])
def test_a_cli_duration_that_is_no_number_is_a_usage_error(lake, value):
    result = run(lake.url, "expire", "--max-age", value, "--dry-run")
    assert result.status == 2, result
    assert "Traceback" not in result.err and "duration" in result.err


@pytest.mark.parametrize("value", ["²", "99999999999999999999"])
def test_a_pyiceberg_timestamp_out_of_range_names_itself(value):
    with pytest.raises(ValueError, match="timestamp"):
        time_selector(value)


def test_mount_options_are_still_numbers():
    args = argparse.Namespace(mount_root="/lake", mountpoint="/mnt", options=["version=12"])
    assert config_from_args(args).version == 12
