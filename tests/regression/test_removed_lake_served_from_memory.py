"""Regression: a lakehouse root directory removed under a warm reader kept answering.

The warm probe of the next root asks the root directory's descriptor, which is
reopened by path when the directory was removed; with nothing at the path the
reopening raised FileNotFoundError, which `LocalBackend.exists` read as "that root is
missing". So the reader kept serving the version it remembered (and the definitions it
had cached) from a lakehouse that no longer existed, through the API, trinity:// and
everything built on them. Now a root directory that was open and is gone is a
LakehouseNotFoundError naming it (ENOENT through trinity://), while a root that never
existed still reads as empty (creating a lakehouse probes before making it).
"""

from __future__ import annotations

import shutil

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.fs.spec import TrinityFileSystem
from trinityfs.storage import Storage


def test_a_removed_lake_is_not_served_from_memory(tmp_path):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url)
    lake.create_namespace("ns")
    lake.create_table("ns", "t1", {"properties": {"k": "v"}})
    reader = Lakehouse.open(url)
    fs = TrinityFileSystem(url)
    assert reader.describe_table("ns", "t1").properties["k"] == "v"
    assert fs.cat("ns/t1")
    shutil.rmtree(url)
    with pytest.raises(LakehouseNotFoundError, match="lake"):
        reader.latest_version()
    with pytest.raises(LakehouseNotFoundError):
        reader.describe_table("ns", "t1")
    with pytest.raises(FileNotFoundError):
        fs.cat("ns/t1")


def test_a_root_that_never_existed_reads_as_empty_and_can_be_created(tmp_path):
    storage = Storage(str(tmp_path / "not-yet"))
    assert not storage.exists("_latest_hint.txt")
    lake = Lakehouse.create(str(tmp_path / "not-yet"))
    assert lake.latest_version() == 0
