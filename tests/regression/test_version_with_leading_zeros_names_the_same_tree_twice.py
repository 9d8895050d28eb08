"""`trinity://v/00001/...` and the mount's `/v/00001` read version 1: every object of a
version had a second (third, ...) name besides the `/v/1` that `/v` lists, so rsync, diff
and caches saw two trees. A version directory is now named only as `/v` lists it: a number
with leading zeros is no such directory (FileNotFoundError, ENOENT) in both front ends,
which share the path model (trinityfs/catalog/paths.py)."""

from __future__ import annotations

import errno
import os

import pytest

from tests.regression.fuse_mount import FUSE, mounted
from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NON_CANONICAL = ["01", "00001", "00", "0" * 30 + "1"]


@pytest.fixture
def root(tmp_path) -> str:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")  # 1
    lake.create_table("ns", "t", {"table_format": "DELTA"})  # 2
    return lake.url


@pytest.mark.parametrize("segment", NON_CANONICAL)
def test_trinity_fs_refuses_a_version_with_leading_zeros(root: str, segment: str) -> None:
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    assert fs.ls("/v/2/ns", detail=False) == ["/v/2/ns/t"]  # the listed name works
    for path in (f"/v/{segment}", f"/v/{segment}/ns", f"/v/{segment}/ns/t"):
        with pytest.raises(FileNotFoundError):
            fs.info(path)
        assert not fs.exists(path)
    with pytest.raises(FileNotFoundError):
        fs.cat_file(f"/v/{segment}/ns/t")
    assert "00" not in " ".join(fs.ls("/v", detail=False))


@FUSE[0]
@FUSE[1]
def test_mount_refuses_a_version_with_leading_zeros(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        assert os.listdir(m.path / "v" / "2" / "ns") == ["t"]
        for segment in NON_CANONICAL:
            for rel in (segment, f"{segment}/ns", f"{segment}/ns/t"):
                with pytest.raises(FileNotFoundError) as info:
                    os.stat(m.path / "v" / rel)
                assert info.value.errno == errno.ENOENT
        assert all(not e.startswith("0") or e == "0" for e in os.listdir(m.path / "v"))
