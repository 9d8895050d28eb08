"""Read-modify-write through the mount lost a change made meanwhile: a read serves the
mount's cached latest snapshot (up to `latest_ttl` old), but a write opened afterwards
based its commit on the latest version probed at that moment. So replacing a table
through the API and at once saving it from an editor on the mount (`vim -c wq`) wrote
the content read before the replace on top of it, with no conflict: the replace was
lost (found by fronts5, /tmp/f5/probe8.py). A write to an existing table is now based
on the snapshot the mount showed; a change since is a conflict (the close fails, the
newer definition stays), and a later open sees it."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest
from fuse_mount import FUSE, mounted

from trinityfs import Lakehouse
from trinityfs.fuse.operations import TrinityOperations


def _lake(tmp_path) -> str:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    lake.create_table("ns", "other", {"table_format": "ICEBERG"})
    return root


def _read(ops: TrinityOperations, path: str) -> bytes:
    fh = ops.open(path, os.O_RDONLY)
    try:
        return ops.read(path, 1 << 20, 0, fh)
    finally:
        ops.release(path, fh)


def _write(ops: TrinityOperations, path: str, data: bytes) -> None:
    fh = ops.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        ops.write(path, data, 0, fh)
        ops.flush(path, fh)
    finally:
        ops.release(path, fh)


def _format(root: str, name: str) -> str:
    return Lakehouse.open(root).describe_table("ns", name).table_format


def test_a_stale_read_written_back_is_a_conflict(tmp_path):
    root = _lake(tmp_path)
    ops = TrinityOperations(Lakehouse.open(root), latest_ttl=30, prefetch_threads=0)
    seen = _read(ops, "/ns/t")
    assert b"ICEBERG" in seen
    Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})  # another process
    edited = seen.replace(b'"ICEBERG"', b'"DELTA"')
    with pytest.raises(OSError) as info:
        _write(ops, "/ns/t", edited)
    assert info.value.errno in (errno.EBUSY, errno.ESTALE, errno.EAGAIN), info.value
    assert _format(root, "t") == "HUDI"


def test_other_tables_are_written_in_that_window(tmp_path):
    root = _lake(tmp_path)
    ops = TrinityOperations(Lakehouse.open(root), latest_ttl=30, prefetch_threads=0)
    seen = _read(ops, "/ns/other")
    Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})
    _write(ops, "/ns/other", seen.replace(b'"ICEBERG"', b'"DELTA"'))
    assert (_format(root, "t"), _format(root, "other")) == ("HUDI", "DELTA")


@FUSE[0]
@FUSE[1]
def test_through_a_real_mount(tmp_path):
    root = _lake(tmp_path)
    with mounted(root, tmp_path / "mnt", "-o", "latest_ttl=30") as mount:
        path = mount.path / "ns" / "t"
        seen = path.read_bytes()
        Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})
        code = (
            "import sys; f = open(sys.argv[1], 'wb'); f.write(sys.stdin.buffer.read()); f.close()"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            input=seen.replace(b'"ICEBERG"', b'"DELTA"'),
            capture_output=True,
        )
        assert done.returncode != 0, done.stderr
        assert _format(root, "t") == "HUDI"
        assert json.loads(path.read_bytes())["definition"]["table_format"] == "HUDI"
