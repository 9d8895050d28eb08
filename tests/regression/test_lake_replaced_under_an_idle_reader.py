"""Regression: a warm reader that sits idle past its trust window while its lakehouse
is replaced in place by one with fewer versions.

Found 2026-11-24: the reader's next "latest" ran the full path (markers, probes) and
found the new lakehouse's latest, below the version it had confirmed; `RootStore._confirm`
ignored that (a racing thread's older answer looks the same), and the reader went on
answering about the lakehouse it remembered: the tree of its cached roots, the version
number of the new one. Now a latest below the remembered one, whose root is gone,
is checked against the lakehouse id: another id raises LakehouseNotFoundError naming
the location ("replaced while open"), on every later question too. A latest root
deleted by hand (the same lakehouse, damaged) is answered as before (fsck reports it).
The tests marked "fails on 612a50e" fail on the code before.
"""

from __future__ import annotations

import os
import uuid

import fsspec
import pytest
from replaced_lakes import LOCAL, empty_in_place, lake_with

from trinityfs.catalog import Lakehouse
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.format.paths import LATEST_HINT, root_node_file


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _idle_reader(url: str, **options) -> tuple[Lakehouse, Clock]:
    """A reader whose trust window runs on a clock the test moves."""
    reader = Lakehouse.open(url, **options)
    clock = Clock()
    roots = reader.engine.roots
    roots._clock = clock
    roots._distrust_from(0)  # confirmations by the real clock: void
    reader.list_tables("ns")  # warm: latest confirmed, its root cached
    return reader, clock


@pytest.mark.parametrize("new_versions", [1, 3, 5])
def test_an_idle_reader_of_a_lakehouse_replaced_with_fewer_versions_raises(tmp_path, new_versions):
    """Fails on 612a50e."""
    directory = tmp_path / "lake"
    lake_with(str(directory), 6, storage_options=LOCAL)
    reader, clock = _idle_reader(str(directory), storage_options=LOCAL)
    assert reader.list_tables("ns") == [f"t{i}" for i in range(5)]
    empty_in_place(directory)
    lake_with(str(directory), new_versions, prefix="new", storage_options=LOCAL)
    clock.now += 3600  # idle past the trust window

    with pytest.raises(LakehouseNotFoundError, match=f"{directory}.*replaced while open"):
        reader.list_tables("ns")
    with pytest.raises(LakehouseNotFoundError, match="replaced while open"):
        reader.latest_version()  # and again: the handle does not answer from memory
    with pytest.raises(LakehouseNotFoundError, match="replaced while open"):
        reader.create_table("ns", "from-the-old-handle")
    fresh = Lakehouse.open(str(directory), storage_options=LOCAL)
    assert fresh.latest_version() == new_versions
    assert fresh.list_tables("ns") == [f"new{i}" for i in range(new_versions - 1)]


def test_an_idle_reader_whose_trust_was_dropped_still_raises(tmp_path):
    """`_distrust_from` (this process's expiration forgot a root) lets any latest be
    confirmed, a lower one too: the check runs before that. Fails on 612a50e."""
    directory = tmp_path / "lake"
    lake_with(str(directory), 6, storage_options=LOCAL)
    reader, _ = _idle_reader(str(directory), storage_options=LOCAL)
    reader.engine.roots.forget(2)
    empty_in_place(directory)
    lake_with(str(directory), 2, prefix="new", storage_options=LOCAL)
    with pytest.raises(LakehouseNotFoundError, match="replaced while open"):
        reader.latest_version()


def test_on_an_object_store_an_idle_reader_raises_too():
    """Fails on 612a50e."""
    url = f"memory://replaced-idle-{uuid.uuid4().hex}"
    store = fsspec.filesystem("memory")
    try:
        lake_with(url, 5)
        reader, clock = _idle_reader(url)
        store.rm(url, recursive=True)
        lake_with(url, 2, prefix="new")
        clock.now += 3600
        with pytest.raises(LakehouseNotFoundError, match=f"{url}.*replaced while open"):
            reader.list_tables("ns")
        assert Lakehouse.open(url).list_tables("ns") == ["new0"]
    finally:
        if store.exists(url):
            store.rm(url, recursive=True)


def test_a_latest_root_deleted_by_hand_is_not_called_a_replacement(tmp_path):
    """Guard: the same lakehouse, its latest root deleted (damage fsck reports): the
    reader answers the version below as before, no LakehouseNotFoundError."""
    directory = tmp_path / "lake"
    lake_with(str(directory), 6, storage_options=LOCAL)
    reader, clock = _idle_reader(str(directory), storage_options=LOCAL)
    os.remove(directory / root_node_file(6))
    (directory / LATEST_HINT).write_text("5")
    clock.now += 3600
    assert reader.latest_version() == 5
