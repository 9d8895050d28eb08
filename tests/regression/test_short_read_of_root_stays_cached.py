"""Issue 10 case 8: one short read of an immutable file stayed in the cache.

At 937923f a read that returned fewer bytes than the file holds (a client ignoring
Content-Length) was cached: if it was the latest root, that process could neither read
nor commit until restarted. Now only verified bytes enter the cache and bytes that fail
to decode are dropped, so the next read goes to storage again.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import root_node_file


def _short_once(lake: Lakehouse, location: str) -> list[str]:
    backend = lake.storage.backend
    real_read = backend.read
    shortened: list[str] = []

    def read(loc: str) -> bytes:
        data = real_read(loc)
        if loc == location and not shortened:
            shortened.append(loc)
            return data[: len(data) // 2]
        return data

    backend.read = read
    return shortened


def test_short_read_of_the_latest_root_is_not_cached(tmp_path):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    version = lake.latest_version()

    fresh = Lakehouse.open(url)
    shortened = _short_once(fresh, root_node_file(version))
    with pytest.raises(CorruptFileError) as err:
        fresh.list_tables("ns")
    assert shortened and err.value.path == root_node_file(version)
    # the process recovers: the root is read again, reads and commits work
    assert fresh.list_tables("ns") == ["t"]
    fresh.create_table("ns", "u")
    assert fresh.list_tables("ns") == ["t", "u"]


def test_short_read_of_a_definition_is_not_cached(tmp_path):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"properties": {"owner": "alice" * 20}})
    location = next(loc for ref, loc in lake.snapshot().iter_all() if ref.kind == "table")

    fresh = Lakehouse.open(url)
    _short_once(fresh, location)
    with pytest.raises(CorruptFileError):
        fresh.describe_table("ns", "t")
    assert fresh.describe_table("ns", "t").properties["owner"] == "alice" * 20
