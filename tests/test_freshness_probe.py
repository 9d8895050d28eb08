"""A warm `cat` of the latest version (issue 13: <= 1.5x fsspec's local cat, one request).

The probe of the next root was made flat (txn/roots.py `RootStore.latest_version`,
`Storage.exists(built=True)`, the root-level branch of `LocalBackend.exists`, the inlined
check of `RootDir.fd`). What it must keep:

- one storage request per warm latest read, none per pinned read;
- a root directory removed under a warm reader, and a new one (or a symbolic link to
  one) put at its path, is noticed by the very next latest read: the root's descriptor
  is still checked (one fstat) before every probe, or a probe would look into the
  removed, empty directory and keep answering the remembered version forever. Noticed
  means an error (the reader remembers the removed lakehouse; see
  tests/regression/test_replaced_lake_written_by_a_warm_writer.py); a filesystem
  opened again reads the new one.

`test_a_warm_latest_cat_costs_few_calls_more_than_a_pinned_one` fails on the code before
(32 calls more: the probe went through 6 more layers, validated the root's name, built it
again, took 3 more locks, and both reads entered 2 generator context managers).
The swap tests pass there too: they guard the descriptor check the probe now inlines
(they fail when `RootDir.fd` trusts its descriptor without checking it).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from expire_clock import expiring_later

from trinityfs.catalog import Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.fs.spec import TrinityFileSystem

LOCAL = {"fsync": False}


def _lake_and_a_newer_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A lakehouse at `lake`, and at `copy` the same lakehouse one commit further."""
    lake = tmp_path / "lake"
    first = Lakehouse.create(str(lake), storage_options=LOCAL)
    first.create_namespace("ns")
    first.create_table("ns", "t0")
    copy = tmp_path / "copy"
    shutil.copytree(lake, copy)
    Lakehouse.open(str(copy), storage_options=LOCAL).create_table("ns", "t1")
    return lake, copy


def _warm(fs: TrinityFileSystem) -> int:
    version = fs.lake.latest_version()
    for _ in range(3):
        fs.cat("ns/t0")
    return version


def _requests(fs: TrinityFileSystem) -> int:
    return fs.lake.storage.stats.snapshot()["requests"]


@pytest.mark.parametrize("how", ["new directory", "symbolic link"])
def test_a_root_swapped_under_a_warm_reader_is_noticed_by_the_next_latest_read(tmp_path, how):
    lake, copy = _lake_and_a_newer_copy(tmp_path)
    fs = TrinityFileSystem(str(lake), skip_instance_cache=True, storage_options=LOCAL)
    version = _warm(fs)
    with pytest.raises(FileNotFoundError):
        fs.cat("ns/t1")
    before = _requests(fs)
    fs.cat("ns/t0")
    assert _requests(fs) - before == 1  # warm: the probe of the next root only

    shutil.rmtree(lake)  # removed: the reader's root descriptor now names an empty directory
    if how == "new directory":
        os.rename(copy, lake)
    else:  # the root may be a link (the user chose it): it is followed when reopened
        os.symlink(copy, lake)

    for path in ("ns/t0", "ns/t1"):  # the very next latest read notices
        with pytest.raises(FileNotFoundError, match="replaced by another directory"):
            fs.cat(path)
    again = TrinityFileSystem(str(lake), skip_instance_cache=True, storage_options=LOCAL)
    assert json.loads(again.cat("ns/t1"))
    assert again.lake.latest_version() == version + 1


def _calls(fn) -> int:
    count = 0

    def profile(frame, event, arg) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count - 1  # sys.setprofile(None) itself


def test_a_warm_latest_cat_costs_few_calls_more_than_a_pinned_one(tmp_path):
    """Machine-independent: Python and C calls of one warm cat. Here latest / pinned
    were 105 / 73 calls on the code before, now 68 / 55 (the latest read's extra:
    32 -> 13)."""
    lake, _ = _lake_and_a_newer_copy(tmp_path)
    fs = TrinityFileSystem(str(lake), skip_instance_cache=True, storage_options=LOCAL)
    version = _warm(fs)
    pinned = f"v/{version}/ns/t0"
    fs.cat(pinned)
    assert fs.cat(pinned) == fs.cat("ns/t0")
    latest_calls = min(_calls(lambda: fs.cat("ns/t0")) for _ in range(3))
    pinned_calls = min(_calls(lambda: fs.cat(pinned)) for _ in range(3))
    assert latest_calls - pinned_calls <= 16, (latest_calls, pinned_calls)
    before = _requests(fs)
    fs.cat(pinned)
    assert _requests(fs) == before


# -- the catalog API: Lakehouse.at() / snapshot() / describe_* of the latest version ------


def test_a_warm_latest_catalog_read_does_not_look_up_the_lakehouse_definition_again(tmp_path):
    """(fails on the code before: every `Lakehouse.at()` built the version's tree again,
    reading and checking its lakehouse definition: 5 lookups for 5 reads)"""
    lake, _ = _lake_and_a_newer_copy(tmp_path)
    writer = Lakehouse.open(str(lake), storage_options=LOCAL)
    reader = Lakehouse.open(str(lake), storage_options=LOCAL)
    roots = reader.engine.roots
    looked_up: list[int] = []
    real = roots.lakehouse_def

    def counted(root):
        looked_up.append(1)
        return real(root)

    roots.lakehouse_def = counted  # type: ignore[method-assign]
    version = reader.latest_version()
    for _ in range(5):
        assert reader.describe_table("ns", "t0").id
        assert reader.snapshot().version == version
    assert len(looked_up) == 1
    writer.create_table("ns", "t2")  # a commit by another writer: the next read sees it
    assert reader.describe_table("ns", "t2").id
    assert reader.snapshot().version == version + 1 and len(looked_up) == 2


def test_views_of_one_version_are_distinct_objects(tmp_path):
    """The tree of a version is looked up once and shared (fails on the code before on
    the last line); the read-only views over it are not (view() sets `.selection` on
    the one it returns: a guard)."""
    lake, _ = _lake_and_a_newer_copy(tmp_path)
    reader = Lakehouse.open(str(lake), storage_options=LOCAL)
    version = reader.latest_version()
    pinned = reader.view(str(version))
    assert pinned.selection is not None
    latest = reader.snapshot()
    assert latest is not pinned and latest.selection is None
    assert latest.snapshot is pinned.snapshot  # the same tree, looked up once


def test_a_version_forgotten_by_expiration_is_not_served_from_the_reused_tree(tmp_path):
    """Guard: the root store still decides whether a version is readable (expiration in
    this process forgets a root it deleted: the next read of it fails cleanly)."""
    lake, _ = _lake_and_a_newer_copy(tmp_path)
    reader = Lakehouse.open(str(lake), storage_options=LOCAL)
    old = reader.latest_version()
    assert reader.at(old).describe_table("ns", "t0").id
    for i in range(3):
        reader.create_table("ns", f"x{i}")
    with expiring_later():
        reader.expire(min_versions=1, max_age_millis=0, grace_millis=0)
    with pytest.raises(VersionNotFoundError):
        reader.at(old)
    assert reader.at().describe_table("ns", "x2").id
