"""A namespace, table or view name over the lakehouse's limit (100 bytes of UTF-8) was
refused with EINVAL ("Invalid argument") by trinity:// and the FUSE mount, where shells
and tools expect ENAMETOOLONG ("File name too long", what every local file system says
for a name over its limit). Now the one errno mapping of each front end
(trinityfs/fs/errors.py, used by the mount) gives ENAMETOOLONG for a name over the limit
(an OSError that is still a ValueError, as every refused name was), and nothing is
committed. Other invalid names stay EINVAL; looking a long name up stays ENOENT."""

from __future__ import annotations

import errno
import json
import os
import subprocess

import pytest

from tests.regression.fuse_mount import FUSE, mounted
from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

LONG = "n" * 101
LONG_UTF8 = "é" * 51  # 51 characters, 102 bytes
DEFINITION = json.dumps({"kind": "table", "definition": {"table_format": "DELTA"}}).encode()


@pytest.fixture
def root(tmp_path) -> str:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "DELTA"})
    return lake.url


def too_long(info: pytest.ExceptionInfo) -> None:
    assert isinstance(info.value, OSError) and isinstance(info.value, ValueError)
    assert info.value.errno == errno.ENAMETOOLONG, info.value


@pytest.mark.parametrize("name", [LONG, LONG_UTF8])
def test_trinity_fs_says_name_too_long(root: str, name: str) -> None:
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    before = Lakehouse.open(root).latest_version()
    for call in (
        lambda: fs.mkdir(f"/{name}"),
        lambda: fs.pipe_file(f"/ns/{name}", DEFINITION),
        lambda: fs.mv("/ns/t", f"/ns/{name}"),
        lambda: fs.mv("/ns", f"/{name}"),
    ):
        with pytest.raises(OSError) as info:
            call()
        too_long(info)
    with pytest.raises(ValueError) as info:  # other invalid names stay EINVAL
        fs.mkdir("/has space")
    assert info.value.errno == errno.EINVAL
    assert not fs.exists(f"/ns/{name}")  # a lookup: no such file
    assert Lakehouse.open(root).latest_version() == before
    fs.mkdir("/" + "n" * 100)  # the limit itself is a name


@FUSE[0]
@FUSE[1]
def test_mount_says_name_too_long(root: str, tmp_path) -> None:
    before = Lakehouse.open(root).latest_version()
    with mounted(root, tmp_path / "mnt") as m:
        for name in (LONG, LONG_UTF8):
            for call in (
                lambda n=name: os.mkdir(m.path / n),
                lambda n=name: os.open(m.path / "ns" / n, os.O_WRONLY | os.O_CREAT),
                lambda n=name: os.rename(m.path / "ns" / "t", m.path / "ns" / n),
                lambda n=name: os.rename(m.path / "ns", m.path / n),
            ):
                with pytest.raises(OSError) as info:
                    call()
                assert info.value.errno == errno.ENAMETOOLONG, info.value
        shell = subprocess.run(["mkdir", str(m.path / LONG)], capture_output=True, text=True)
        assert shell.returncode != 0 and "File name too long" in shell.stderr, shell.stderr
        with pytest.raises(OSError) as info:
            os.mkdir(m.path / "has space")
        assert info.value.errno == errno.EINVAL
        assert sorted(os.listdir(m.path / "ns")) == ["t"]
    assert Lakehouse.open(root).latest_version() == before
