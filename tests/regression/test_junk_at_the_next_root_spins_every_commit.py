"""Regression: a directory, symbolic link or FIFO at the name of the next version's root
(a planted or stray entry inside the lakehouse root) made every commit spin for the
whole commit budget (120 s of CPU by default, 237,112 "lost races" measured) and then
fail with CommitRetriesExhaustedError, which names no file. Readers skip the entry
(`exists` is False for anything but a regular file), so the rebase found the same
latest version every time while `os.link` kept reporting EEXIST. Now the create tells
a lost race from an entry in the way: CorruptFileError naming it at once, nothing
committed, and the entry is left alone. Found 2026-11-24 (helper adversary); fails on
e0c4099 (here with a 3 s budget: CommitRetriesExhaustedError after 3 s).
"""

from __future__ import annotations

import os
import time

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import root_node_file

NO_FSYNC = {"fsync": False}


def _dir(path: str) -> None:
    os.mkdir(path)


def _link(path: str) -> None:
    os.symlink(root_node_file(0), path)


def _dangling(path: str) -> None:
    os.symlink("/nonexistent/root.arrow", path)


@pytest.mark.parametrize("plant", [_dir, _link, _dangling, os.mkfifo], ids=lambda f: f.__name__)
def test_an_entry_in_the_way_of_the_next_root_fails_the_commit_at_once(tmp_path, plant):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options=NO_FSYNC, txn_ttl_millis=3000)
    lake.create_namespace("ns")
    in_the_way = os.path.join(root, root_node_file(2))
    plant(in_the_way)
    started = time.monotonic()
    with pytest.raises(CorruptFileError, match=root_node_file(2)):
        lake.create_table("ns", "t", {})
    assert time.monotonic() - started < 2.5
    assert os.path.lexists(in_the_way)  # left for a person to look at
    fresh = Lakehouse.open(root, storage_options=NO_FSYNC)
    assert fresh.latest_version() == 1 and fresh.list_tables("ns") == []
