"""Regression: a lakehouse replaced *inside the same directory* (or prefix) while a
process holds it: its files deleted and a new lakehouse created there.

Found 2026-11-24, after the fix for a replaced root directory
(tests/regression/test_replaced_lake_written_by_a_warm_writer.py): the directory's
identity does not change here, so that check does not see it, and a warm writer
committed its next version on the tree it remembered into the new lakehouse, which no
reader could open after that. Two checks now refuse such a commit, nothing written:

- where an existence check is cheap (local disk), a commit checks before writing
  anything that the root of its base version is still there; gone with no later
  version means the lakehouse was removed or replaced (gone with later versions is
  expiration after other commits: the commit moves onto the latest as before);
- a commit that lost its race (the new lakehouse already has the next version) checks,
  on every store, that the latest version is not below its base and belongs to the same
  lakehouse (the LakehouseDef id) before it re-applies its changes there.

A commit refused after its race was lost has written its definition file already: an
orphan nothing references (as after any refused commit; fsck lists it, expiration
reclaims it). On local disk a new lakehouse with exactly as many versions is caught too
(the base root's file identity: test_lake_replaced_in_place_with_as_many_versions.py).
Not caught (see docs/LIFECYCLE.md): on object stores, a new lakehouse with as many or
fewer versions than the writer's base. Each other test fails on the code before.
"""

from __future__ import annotations

import os
from pathlib import Path

import fsspec
import pytest
from replaced_lakes import LOCAL, empty_in_place, lake_with

from trinityfs.catalog import Lakehouse
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.format.paths import root_node_file


def _roots(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith("_") and n.endswith(".arrow"))


def _new_files(before: list[Path], directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.is_file() and p not in before)


@pytest.mark.parametrize(
    "new_versions",
    [
        1,
        3,
        6,
        12,
    ],
    ids=lambda n: f"new-has-{n}",
)
def test_a_warm_writer_never_commits_into_a_lakehouse_made_again_in_its_directory(
    tmp_path, new_versions
):
    directory = tmp_path / "lake"
    old = lake_with(str(directory), 6, storage_options=LOCAL)
    empty_in_place(directory)
    new = lake_with(str(directory), new_versions, storage_options=LOCAL)
    roots = _roots(directory)
    files = sorted(p for p in directory.rglob("*") if p.is_file())

    with pytest.raises(LakehouseNotFoundError, match="nothing was committed"):
        old.create_table("ns", "from-the-old-handle")

    assert _roots(directory) == roots
    new_files = _new_files(files, directory)
    assert all("from-the-old-handle" in name for name in new_files), new_files
    if new_versions < 6:  # refused before writing anything
        assert new_files == []
    reader = Lakehouse.open(str(directory), storage_options=LOCAL)
    assert reader.latest_version() == new_versions
    assert "from-the-old-handle" not in reader.list_tables("ns")
    reader.check()
    new.create_table("ns", "still-writable")


def test_an_open_transaction_does_not_commit_into_a_lakehouse_made_again_in_place(tmp_path):
    directory = tmp_path / "lake"
    old = lake_with(str(directory), 4, storage_options=LOCAL)
    txn = old.transaction()
    txn.create_table("ns", "in-flight")
    empty_in_place(directory)
    lake_with(str(directory), 9, storage_options=LOCAL)
    roots = _roots(directory)
    with pytest.raises(LakehouseNotFoundError, match="another lakehouse"):
        txn.commit()
    assert _roots(directory) == roots


def test_on_an_object_store_a_lost_race_into_another_lakehouse_commits_nothing():
    url = "memory://replaced-in-place-test"
    store = fsspec.filesystem("memory")
    try:
        old = lake_with(url, 5)
        store.rm(url, recursive=True)
        lake_with(url, 8)
        before = set(store.find(url))
        with pytest.raises(LakehouseNotFoundError, match="another lakehouse"):
            old.create_table("ns", "from-the-old-handle")
        added = sorted(set(store.find(url)) - before)
        assert all("table-ns-from-the-old-handle-" in name for name in added), added
        assert Lakehouse.open(url).latest_version() == 8
    finally:
        if store.exists(url):
            store.rm(url, recursive=True)


def test_a_base_expired_after_later_commits_still_moves_onto_the_latest(tmp_path):
    """The root of the base gone *with* later versions is expiration, not replacement:
    the commit goes on (it loses its race and re-applies onto the latest)."""
    directory = tmp_path / "lake"
    writer = lake_with(str(directory), 3, storage_options=LOCAL)
    base = writer.latest_version()
    other = Lakehouse.open(str(directory), storage_options=LOCAL)
    for i in range(3):
        other.create_table("ns", f"other{i}")
    os.remove(directory / root_node_file(base))  # as expiration would
    txn = writer.transaction(version=base)
    txn.create_table("ns", "mine")
    assert txn.commit() == base + 4
    assert "mine" in Lakehouse.open(str(directory), storage_options=LOCAL).list_tables("ns")
