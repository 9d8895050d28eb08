"""A symbolic link (or a directory) at the latest root's name: readers skip anything
but a regular file there, so they serve the version before as the latest, and every
commit fails on the entry; fsck said ok (listings skip such entries). Reported by txn6
(12:31). Now fsck reports it as an error naming the entry."""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse
from trinityfs.format.paths import root_node_file


@pytest.mark.parametrize("what", ["symlink", "directory"])
def test_fsck_names_a_non_file_at_the_next_root_name(tmp_path, what) -> None:
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root), storage_options={"fsync": False})
    lake.create_namespace("a")
    lake.create_namespace("b")  # version 2
    name = root / root_node_file(2)
    copy = tmp_path / "elsewhere.arrow"
    copy.write_bytes(name.read_bytes())
    name.unlink()
    if what == "symlink":
        os.symlink(copy, name)
    else:
        name.mkdir()
    report = Lakehouse.open(str(root), storage_options={"fsync": False}).fsck()
    assert not report.ok
    errors = [p for p in report.errors if p.location == root_node_file(2)]
    assert errors and "version 1 as the latest" in errors[0].message, report.errors
