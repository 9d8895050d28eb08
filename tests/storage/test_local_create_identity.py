"""A root's identity (device, inode, size, mtime: `LocalBackend.identity`) is taken
from the descriptor that wrote it (`create_noting_identity`), not by a stat of its name
after the link: one system call and one storage request fewer per commit (issue 13).
The identity must be exactly what a stat says, or the next commit's check on its base
(`RootStore.root_unchanged`) would refuse it as a lakehouse replaced in place. These
tests fail on e0c4099 (no such method; a stat of the new root's name after each create).
"""

from __future__ import annotations

import os
import types

import pytest

from trinityfs import Lakehouse
from trinityfs.format.paths import root_node_file
from trinityfs.storage import local
from trinityfs.storage.local import LocalBackend


@pytest.mark.parametrize("fsync", [False, True], ids=["no-fsync", "fsync"])
@pytest.mark.parametrize("loc", ["_1.arrow", "a/b/c/r.arrow"])
@pytest.mark.parametrize("wait", [False, True], ids=["no-wait", "after-a-flush"])
def test_the_create_tells_what_a_stat_would(tmp_path, fsync, loc, wait):
    backend = LocalBackend(str(tmp_path / "lake"), fsync=fsync)
    flushed: list[int] = []
    first_durable = (lambda: flushed.append(1)) if wait else None
    created, found = backend.create_noting_identity(loc, b"root", first_durable)
    assert created and found is not None
    assert found == backend.identity(loc)
    assert flushed == ([1] if wait else [])
    # another create of the name: nothing created, no identity (of someone else's file)
    assert backend.create_noting_identity(loc, b"other", first_durable) == (False, None)
    assert backend.read(loc) == b"root"
    assert [n for n in os.listdir(tmp_path / "lake" / os.path.dirname(loc)) if "tmp" in n] == []


class _CountingOs(types.ModuleType):
    """`os` for local.py that records the names given to `stat`."""

    def __init__(self) -> None:
        super().__init__("os")
        self.stats: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def stat(self, path, *args, **kwargs):
        self.stats.append(str(path))
        return os.stat(path, *args, **kwargs)


@pytest.mark.parametrize("fsync", [False, True], ids=["no-fsync", "fsync"])
def test_a_commit_stats_only_its_base_root(tmp_path, monkeypatch, fsync):
    """The base root is stat'ed once (is it still the file this process read?), the new
    root never: its identity came from the create, and the next commit's check accepts it
    (a wrong identity would be refused as a lakehouse replaced in place)."""
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": fsync})
    lake.create_namespace("ns")
    counting = _CountingOs()
    monkeypatch.setattr(local, "os", counting)
    for i in range(3):
        base = lake.latest_version()
        counting.stats.clear()
        assert lake.create_table("ns", f"t{i}") == base + 1
        assert counting.stats == [root_node_file(base)]
    assert lake.engine.roots._ids.get(base + 1) == lake.storage.backend.identity(
        root_node_file(base + 1)
    )
