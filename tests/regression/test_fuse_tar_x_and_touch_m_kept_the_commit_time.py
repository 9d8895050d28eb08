"""`tar x` and `touch -m` into the mount exited 0 and kept the commit time: the mount
ignored utimens (653341f), and under libfuse 2.9 (mfusepy's default) a call setting only
one of the two times never reaches the mount at all (review7 R9). With libfuse 3 every
utimensat reaches it, with UTIME_NOW/UTIME_OMIT for the time not given, and the times are
shown (trinityfs/fuse/times.py); docs/fuse.md says which calls libfuse 2 drops.
Runs under libfuse 3 (FUSE_LIBRARY_NAME=fuse3) where it is installed."""

from __future__ import annotations

import ctypes.util
import subprocess
import tarfile

import pytest
from fuse_mount import FUSE, mounted, one_table

pytestmark = [
    *FUSE,
    pytest.mark.skipif(ctypes.util.find_library("fuse3") is None, reason="libfuse 3 missing"),
]

T2020 = 1577836800
LIBFUSE3 = {"FUSE_LIBRARY_NAME": "fuse3"}


def test_tar_x_and_touch_m_under_libfuse_3(tmp_path):
    root = one_table(str(tmp_path / "lake"), {"table_format": "ICEBERG"})
    with mounted(root, tmp_path / "mnt", env=LIBFUSE3) as mount:
        assert "libfuse 3" in mount.log_text()
        t = mount.path / "ns" / "t"
        archive = tmp_path / "ns.tar"
        (tmp_path / "u").write_bytes(t.read_bytes().replace(b"ICEBERG", b"DELTA"))
        with tarfile.open(archive, "w") as tar:
            info = tar.gettarinfo(tmp_path / "u", arcname="u")
            info.mtime = T2020
            with open(tmp_path / "u", "rb") as f:
                tar.addfile(info, f)
        subprocess.run(["tar", "xf", str(archive), "-C", str(t.parent)], check=True)
        assert (t.parent / "u").stat().st_mtime_ns == T2020 * 10**9
        subprocess.run(["touch", "-m", "-d", "2021-01-01T00:00:00Z", str(t)], check=True)
        assert t.stat().st_mtime_ns == 1609459200 * 10**9
