"""What a commit verifies (docs/FORMAT-CHOICES.md, "What a commit verifies").

- Every file a commit reads is verified: the latest root, the lakehouse definition, each
  node on the paths to the keys it changes, each definition it reads or replaces. A
  damage to any of them refuses the commit with CorruptFileError naming the file.
- What it carries forward untouched it carries by content-hash name: the new version
  reaches the damaged file exactly like its base did, reads of both versions name it,
  fsck names it for both, and restoring the file's bytes repairs both.
- A rollback makes the latest version reach files the previous latest did not: it
  verifies them (the target's nodes, the definitions that differ) before landing.
- The cost is bounded by what the commit touches: a fresh handle's commit reads the
  nodes on its path, not the whole tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from integrity_lakes import OPEN, build_tables_lake, copy_lake, flip, node_files

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import root_node_file

TABLES = 150


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return build_tables_lake(tmp_path_factory.mktemp("pristine") / "lake", TABLES)


def _reads_of_commit(url: str, change) -> tuple[int, set[str]]:
    """(new version, node and definition files read) of `change` on a fresh handle."""
    lake = Lakehouse.open(url, **OPEN)
    read: set[str] = set()
    real = lake.storage.read

    def recording(loc: str) -> bytes:
        read.add(loc)
        return real(loc)

    lake.storage.read = recording
    version = change(lake)
    return version, read


def test_a_fresh_handle_commit_reads_its_path_not_the_whole_tree(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    latest = lake.latest_version()
    tree = node_files(lake, latest)
    assert len(tree) >= 40, "the tree must be big enough to tell a path from the tree"
    version, read = _reads_of_commit(
        lake.storage.url, lambda lk: lk.create_table("ns", "t030a", {"properties": {}})
    )
    assert version == latest + 1
    # the paths it looks up (name checks, its key) and the children a buffer flush
    # rewrites: a handful, whatever the size of the tree (it read all 40+ before)
    node_reads = read & tree
    assert 1 <= len(node_reads) <= 12, f"read {len(node_reads)} of {len(tree)} node files"


def test_damage_on_the_commit_path_refuses_it_and_off_path_is_carried(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    url = str(lake.path)
    latest = lake.latest_version()
    tree = node_files(lake, latest)
    # which nodes a commit of this change reads, found on a throwaway copy
    probe = copy_lake(pristine, tmp_path / "probe")
    _v, read = _reads_of_commit(
        probe.storage.url, lambda lk: lk.replace_table("ns", "t030", {"properties": {"x": "1"}})
    )
    on_path = sorted(read & tree)
    off_path = sorted(tree - read)
    assert on_path and off_path

    # a damaged node on the path: refused, naming the file; nothing committed
    flip(Path(url) / on_path[-1])
    with pytest.raises(CorruptFileError, match=on_path[-1].rpartition("/")[2]):
        Lakehouse.open(url, **OPEN).replace_table("ns", "t030", {"properties": {"x": "1"}})
    assert Lakehouse.open(url, **OPEN).latest_version() == latest
    shutil.copyfile(pristine / on_path[-1], Path(url) / on_path[-1])  # repaired

    # a damaged node off the path: the commit lands and carries it by name
    damaged = off_path[0]
    flip(Path(url) / damaged)
    new = Lakehouse.open(url, **OPEN).replace_table("ns", "t030", {"properties": {"x": "1"}})
    assert new == latest + 1
    reader = Lakehouse.open(url, **OPEN)
    for version in (latest, new):
        assert damaged in node_files(reader, version, stop_at=damaged)
        with pytest.raises(CorruptFileError, match=damaged.rpartition("/")[2]):
            reader.at(version).list_tables("ns")
    report = Lakehouse.open(url, **OPEN).fsck()
    assert not report.ok
    assert {latest, new} <= set(report.affected_versions)
    shutil.copyfile(pristine / damaged, Path(url) / damaged)  # restoring the bytes repairs both
    repaired = Lakehouse.open(url, **OPEN)
    assert repaired.fsck().ok
    assert repaired.at(new).describe_table("ns", "t030").properties == {"x": "1"}
    assert len(repaired.at(new).list_tables("ns")) == TABLES


def test_a_commit_replacing_a_damaged_definition_is_refused(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    location = lake.snapshot().object_location("table", "ns", "t007")
    flip(lake.path / location)
    latest = lake.latest_version()
    with pytest.raises(CorruptFileError, match=location.rpartition("/")[2]):
        Lakehouse.open(lake.storage.url, **OPEN).replace_table("ns", "t007", {"properties": {}})
    assert Lakehouse.open(lake.storage.url, **OPEN).latest_version() == latest
    # dropping it reads nothing of it: the way to get rid of a damaged object
    dropped = Lakehouse.open(lake.storage.url, **OPEN).drop_table("ns", "t007")
    assert dropped == latest + 1


def test_rollback_verifies_what_the_latest_did_not_reach(pristine, tmp_path):
    lake = copy_lake(pristine, tmp_path)
    url = str(lake.path)
    target = lake.latest_version() - 20
    lake.drop_table("ns", "t003")  # the target has t03's definition, the latest does not
    t03 = lake.at(target).object_location("table", "ns", "t003")
    flip(Path(url) / t03)
    latest = lake.latest_version()
    with pytest.raises(CorruptFileError, match=t03.rpartition("/")[2]):
        Lakehouse.open(url, **OPEN).rollback(target)
    shutil.copyfile(pristine / t03, Path(url) / t03)

    only_target = sorted(node_files(lake, target) - node_files(lake, latest))
    assert only_target
    flip(Path(url) / only_target[0])
    with pytest.raises(CorruptFileError, match=only_target[0].rpartition("/")[2]):
        Lakehouse.open(url, **OPEN).rollback(target)
    assert Lakehouse.open(url, **OPEN).latest_version() == latest
    shutil.copyfile(pristine / only_target[0], Path(url) / only_target[0])
    rolled = Lakehouse.open(url, **OPEN).rollback(target)
    tables = Lakehouse.open(url, **OPEN).at(rolled).list_tables("ns")
    assert sorted(tables) == [f"t{i:03d}" for i in range(TABLES - 20)]
    assert root_node_file(rolled)
