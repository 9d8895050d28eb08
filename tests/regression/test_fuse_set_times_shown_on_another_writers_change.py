"""587af67 (review7 R5): times set while saving (`cp -p`: futimens on the open file; rsync:
utimens on its temporary file before the rename) were recorded with whatever definition
was latest after the save, read afresh. Another writer committing the same table right
after this mount's commit got the copied source's mtime on ITS content, so rsync's quick
check (size and mtime) skipped the file on every later run and never restored it. Now
the times go with the definition this mount's save left: the location its commit
produced, or, when the content was unchanged, the one it was compared with.
Driven through TrinityOperations (no mount): the other writer's commit is placed in
the window deterministically."""

from __future__ import annotations

import os

from trinityfs import Lakehouse
from trinityfs.fuse.operations import TrinityOperations

T2020 = 1577836800 * 10**9


def _mount(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    ops = TrinityOperations(lake, latest_ttl=0, prefetch_threads=0)
    fh = ops.open("/ns/t", os.O_RDONLY)
    content = ops.read("/ns/t", 1 << 20, 0, fh)
    ops.release("/ns/t", fh)
    real = ops._saved_with_times

    def another_writer_first(*args):
        Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})
        return real(*args)

    ops._saved_with_times = another_writer_first
    return root, ops, content


def test_cp_p_over_a_table_changed_right_after_the_save(tmp_path):
    root, ops, content = _mount(tmp_path)
    fh = ops.open("/ns/t", os.O_WRONLY | os.O_TRUNC)
    ops.write("/ns/t", content.replace(b"ICEBERG", b"DELTA"), 0, fh)
    ops.utimens("/ns/t", (T2020, T2020))
    ops.flush("/ns/t", fh)
    ops.release("/ns/t", fh)
    assert Lakehouse.open(root).describe_table("ns", "t").table_format == "HUDI"
    assert ops.getattr("/ns/t")["st_mtime"] != T2020


def test_rsync_of_unchanged_content_over_a_table_changed_right_after(tmp_path):
    root, ops, content = _mount(tmp_path)
    fh = ops.create("/ns/.t.AbCdEf", 0o600)
    ops.write("/ns/.t.AbCdEf", content, 0, fh)
    ops.release("/ns/.t.AbCdEf", fh)
    ops.utimens("/ns/.t.AbCdEf", (T2020, T2020))
    ops.rename("/ns/.t.AbCdEf", "/ns/t")  # unchanged: nothing committed by this save
    assert Lakehouse.open(root).describe_table("ns", "t").table_format == "HUDI"
    assert ops.getattr("/ns/t")["st_mtime"] != T2020
