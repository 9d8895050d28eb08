"""The local backend remembers the directories it opened only for definition placement.

`LocalDirs._known_dirs` is read by `directories_to_make` alone, which runs only when
`placement_choices` > 1. Placement ships off (`storage/localdirs.PLACEMENT_CHOICES = 1`),
and 19421b2 still joined and added a string per directory open on every commit and read.
"""

from __future__ import annotations

import pytest

import trinityfs.storage.localdirs as localdirs
from trinityfs import Lakehouse


def _work(lake: Lakehouse) -> None:
    lake.create_namespace("ns")
    for i in range(20):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    assert len(lake.list_tables("ns")) == 20
    again = Lakehouse.open(lake.url)
    assert again.describe_table("ns", "t7")
    assert again.engine.storage.backend._known_dirs == set()


def test_placement_off_remembers_no_directory(tmp_path):
    assert localdirs.PLACEMENT_CHOICES == 1  # as shipped
    lake = Lakehouse.create(str(tmp_path / "lake"))
    _work(lake)
    assert lake.engine.storage.backend._known_dirs == set()


@pytest.mark.parametrize(("fsync", "remembered"), [(True, True), (False, False)])
def test_placement_on_remembers_directories_when_writes_are_durable(
    tmp_path, monkeypatch, fsync, remembered
):
    monkeypatch.setattr(localdirs, "PLACEMENT_CHOICES", 16)
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": fsync})
    lake.create_namespace("ns")
    for i in range(20):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    assert lake.engine.storage.placement_choices == (16 if fsync else 1)
    assert bool(lake.engine.storage.backend._known_dirs) is remembered
    assert len(lake.list_tables("ns")) == 20
