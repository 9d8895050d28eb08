"""`rsync -a` into the mount sent every file it had sent before again, on every run: the
mount ignored utimens (a file's mtime is its commit time), so rsync's quick check (size
and mtime) never matched the source's. Nothing was committed (the content was
unchanged), but every such file was read, sent, parsed and compared again, and listed
by `rsync -i` each run; `cp -p` and `touch -d` were silent no-ops. Now times set
through the mount are shown while the entry keeps the definition they were set on
(trinityfs/fuse/times.py); any committed change shows its commit time again."""

from __future__ import annotations

import os
import subprocess
import time

from fuse_mount import FUSE, mounted, one_table

from trinityfs import Lakehouse

pytestmark = FUSE

DEF = {"table_format": "ICEBERG", "properties": {"a": "1"}}
T2020 = 1577836800 * 10**9  # 2020-01-01T00:00:00Z


def rsync(src, dst) -> str:
    done = subprocess.run(
        ["rsync", "-a", "-i", f"{src}/", f"{dst}/"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done
    return done.stdout


def test_a_second_rsync_of_an_edited_tree_sends_nothing(tmp_path):
    root = one_table(str(tmp_path / "lake"), DEF)
    Lakehouse.open(root).create_table("ns", "u", {"table_format": "DELTA"})
    with mounted(root, tmp_path / "mnt") as mount:
        src = tmp_path / "src"
        rsync(mount.path / "ns", src)  # a copy of the namespace, then edit one file
        (src / "t").write_text((src / "t").read_text().replace('"a": "1"', '"a": "two"'))
        os.utime(src / "t", ns=(T2020 + 7, T2020 + 7))  # not within the commit's second
        os.utime(src / "u", ns=(T2020, T2020))  # touched only: same content
        first = rsync(src, mount.path / "ns")
        assert "t" in first.split() and "u" in first.split()
        after_first = mount.latest()
        assert rsync(src, mount.path / "ns") == ""
        assert rsync(src, mount.path / "ns") == ""
        assert mount.latest() == after_first  # the edit is one version, the touch none
        assert Lakehouse.open(root).describe_table("ns", "t").properties == {"a": "two"}
        assert (mount.path / "ns" / "u").stat().st_mtime_ns == T2020
        assert (mount.path / "ns" / "t").stat().st_mtime_ns == T2020 + 7


def test_touch_d_and_cp_p_are_shown_until_the_entry_changes(tmp_path):
    root = one_table(str(tmp_path / "lake"), DEF)
    with mounted(root, tmp_path / "mnt", "-o", "latest_ttl=0") as mount:
        t = mount.path / "ns" / "t"
        subprocess.run(["touch", "-d", "2020-01-01T00:00:00Z", str(t)], check=True)
        assert t.stat().st_mtime_ns == T2020
        subprocess.run(["touch", "-d", "2020-01-01T00:00:00Z", str(t.parent)], check=True)
        assert t.parent.stat().st_mtime_ns == T2020
        # cp -p of a new file: the times are set before its commit (at close)
        local = tmp_path / "v"
        local.write_text(t.read_text())
        os.utime(local, ns=(T2020 + 5, T2020 + 5))
        subprocess.run(["cp", "-p", str(local), str(t.parent / "v")], check=True)
        assert (t.parent / "v").stat().st_mtime_ns == T2020 + 5
        # a change through the API: the commit time again
        Lakehouse.open(root).replace_table("ns", "t", {"table_format": "HUDI"})
        assert t.stat().st_mtime_ns > time.time_ns() - 60 * 10**9
