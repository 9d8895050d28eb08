"""Regression: moving a namespace into another namespace failed with different errnos in
the mount and in trinity://, which share one path model.

- rename(/ns1, /ns2/new) on the mount answered ENOTDIR, fs.mv("/ns1", "/ns2/new")
  PermissionError EPERM; and `mv /mnt/ns1 /mnt/empty` (mv(1) moves into an existing
  directory: rename(ns1, empty/ns1)) failed "Not a directory" where fs.mv failed EPERM;
- fs.mv("/ns1", "/ns2/x") over an existing table answered EPERM where the mount (and
  rename(2), mv(1) for a directory onto a file) answer ENOTDIR.

Now both answer through one function (fs/errors.namespace_not_movable_to): EPERM when
/ns2/<name> is free (namespaces are one level; `mkdir /ns2/new` is EPERM in both too),
ENOTDIR when a table or view holds the name. Nothing is committed either way.
Documented in docs/fuse.md ("Namespace operations").
"""

from __future__ import annotations

import errno
import os
import subprocess

import pytest

from tests.regression.fuse_mount import FUSE, mounted
from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

pytestmark = FUSE


@pytest.fixture
def root(tmp_path) -> str:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    for ns in ("ns1", "ns2", "empty"):
        lake.create_namespace(ns)
    lake.create_table("ns1", "t", {})
    lake.create_table("ns2", "x", {})
    return str(tmp_path / "lake")


CASES = [("/ns1", "/ns2/new", errno.EPERM), ("/ns1", "/ns2/x", errno.ENOTDIR)]


@pytest.mark.parametrize(("src", "dst", "code"), CASES)
def test_fs_and_mount_answer_one_errno(root, tmp_path, src, dst, code):
    version = Lakehouse.open(root).latest_version()
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    with pytest.raises(OSError) as by_fs:
        fs.mv(src, dst)
    with mounted(root, tmp_path / "mnt") as m, pytest.raises(OSError) as by_mount:
        os.rename(f"{m.path}{src}", f"{m.path}{dst}")
    assert (by_fs.value.errno, by_mount.value.errno) == (code, code)
    assert Lakehouse.open(root).latest_version() == version


def test_mv_command_into_an_existing_namespace(root, tmp_path):
    version = Lakehouse.open(root).latest_version()
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    with pytest.raises(PermissionError) as by_fs:
        fs.mv("/ns1", "/empty")  # into it: /empty/ns1
    assert by_fs.value.errno == errno.EPERM
    with mounted(root, tmp_path / "mnt") as m:
        done = subprocess.run(
            ["mv", str(m.path / "ns1"), str(m.path / "empty")], capture_output=True, text=True
        )
        assert done.returncode != 0
        assert "Operation not permitted" in done.stderr, done.stderr
        assert sorted(os.listdir(m.path)) == ["empty", "ns1", "ns2"]
    assert Lakehouse.open(root).latest_version() == version
