"""A lakehouse whose table and view name maxima differ (`init --table-max-bytes 100
--view-max-bytes 20`): creating, reading or listing a table whose name fits the table
maximum but not the view maximum failed with "invalid view name ... more than the
maximum of 20 bytes", because every lookup computed the name's key as both kinds.
A name too long for one kind can only be the other: that kind is simply not looked up.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import AlreadyExistsError, InvalidNameError
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}
LONG = "t" * 50  # fits the table maximum (100 bytes), not the view maximum (20)


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(
        str(tmp_path / "lake"),
        storage_options=NO_FSYNC,
        table_name_max_size_bytes=100,
        view_name_max_size_bytes=20,
    )
    lake.create_namespace("n")
    return lake


def test_a_table_named_beyond_the_view_maximum_lives_a_full_life(lake):
    created = lake.create_table("n", LONG, {"properties": {"a": "1"}})
    assert lake.describe_table("n", LONG).properties["a"] == "1"
    assert list(lake.list_tables("n")) == [LONG]
    with pytest.raises(AlreadyExistsError, match=f"table n.{LONG} already exists"):
        lake.create_table("n", LONG)
    lake.replace_table("n", LONG, {"properties": {"a": "2"}})
    renamed = lake.rename_table("n", LONG, "n", LONG + "2")
    assert [c.object.name for c in lake.diff(created, renamed) if c.action == "created"] == [
        LONG + "2"
    ]
    lake.drop_table("n", LONG + "2")
    assert list(lake.list_tables("n")) == []


def test_the_filesystem_reaches_it(lake, tmp_path):
    lake.create_table("n", LONG, {"properties": {"a": "1"}})
    fs = TrinityFileSystem(root=lake.url, storage_options=NO_FSYNC, skip_instance_cache=True)
    assert fs.exists(f"/n/{LONG}") and fs.info(f"/n/{LONG}")["type"] == "file"
    assert b'"a": "1"' in fs.cat(f"/n/{LONG}")
    fs.rm(f"/n/{LONG}")
    assert not fs.exists(f"/n/{LONG}")


def test_a_view_name_too_long_for_views_is_still_refused_as_a_view(lake):
    with pytest.raises(InvalidNameError, match="invalid view name"):
        lake.create_view("n", LONG)
    with pytest.raises(InvalidNameError, match="more than the maximum of 100 bytes"):
        lake.create_table("n", "t" * 101)  # too long for both kinds
    with pytest.raises(InvalidNameError):
        lake.at(lake.latest_version()).describe_table("n", "t" * 101)
