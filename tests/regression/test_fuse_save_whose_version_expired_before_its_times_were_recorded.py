"""62db2bf (review7 R10): after a save that set times (`cp -p`; rsync's temporary file
renamed onto the object), the mount read back the version it had committed to find the
definition location to attach the times to. When another writer committed and an
expiration removed that version in between, the read raised VersionNotFoundError and the
close (or rename) failed with ENOENT although the save had landed. Now the location is
the one the save's own transaction wrote: nothing is read back, the close succeeds, and
the times are shown (the table was not changed since). Driven through TrinityOperations
(no mount): the other commit and the expiration are placed in the window."""

from __future__ import annotations

import os
import time

from trinityfs import Lakehouse
from trinityfs.fuse.operations import TrinityOperations

T2020 = 1577836800 * 10**9


def test_cp_p_whose_version_is_expired_before_its_times_are_recorded(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, txn_ttl_millis=600)  # versions expire within seconds
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    ops = TrinityOperations(lake, latest_ttl=0, prefetch_threads=0)
    fh = ops.open("/ns/t", os.O_RDONLY)
    content = ops.read("/ns/t", 1 << 20, 0, fh)
    ops.release("/ns/t", fh)
    real = ops._saved_with_times
    committed = []

    def expire_first(*args):
        other = Lakehouse.open(root)
        committed.append(other.latest_version())
        time.sleep(1.5)
        other.create_namespace("other")  # another writer, not of t
        time.sleep(1.5)  # older than the grace floor by the readers' clock too
        other.expire(max_age_millis=0, min_versions=1, grace_millis=0)
        assert other.oldest_version() > committed[0]  # the save's version is gone
        return real(*args)

    ops._saved_with_times = expire_first
    fh = ops.open("/ns/t", os.O_WRONLY | os.O_TRUNC)
    ops.write("/ns/t", content.replace(b"ICEBERG", b"DELTA"), 0, fh)
    ops.utimens("/ns/t", (T2020, T2020))
    ops.flush("/ns/t", fh)  # ENOENT before
    ops.release("/ns/t", fh)
    assert committed and Lakehouse.open(root).describe_table("ns", "t").table_format == "DELTA"
    assert ops.getattr("/ns/t")["st_mtime"] == T2020
