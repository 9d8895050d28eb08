"""Regression: a warehouse that contains the lakehouse root was accepted.

`warehouse=<parent of the root>` (or the root itself) made every file of the lakehouse
(roots, nodes, definitions) a valid table location: a table pointed there could be
overwritten, and a purge deleted the lakehouse's own files. Now such a warehouse is a
LocationNotAllowedError naming it, and a table location inside the root but outside
the warehouse is refused even when an allow-list prefix covers it.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.catalog.locations import LocationPolicy
from trinityfs.errors import LocationNotAllowedError


@pytest.mark.parametrize(
    "warehouse",
    [
        "/data",
        "/data/lake",
        "/data/lake/",
        "file:///data",
        "/",
        "/data/lake/0101",
        "/data/lake/_exports/w",
    ],
)
def test_warehouse_containing_or_inside_the_lakehouse_files_is_refused(warehouse) -> None:
    with pytest.raises(LocationNotAllowedError, match="lakehouse") as caught:
        LocationPolicy.for_lakehouse("/data/lake", warehouse)
    assert caught.value.location == warehouse
    assert "warehouse" in str(caught.value)


@pytest.mark.parametrize("warehouse", ["s3://b", "s3://b/", "s3a://b/lake"])
def test_on_s3_too(warehouse) -> None:
    with pytest.raises(LocationNotAllowedError):
        LocationPolicy.for_lakehouse("s3://b/lake", warehouse)
    assert LocationPolicy.for_lakehouse("s3://b/lake", "s3://b/warehouse").allows(
        "s3://b/warehouse/t"
    )


@pytest.mark.parametrize("warehouse", [None, "/data/lake/warehouse", "/data/lake/wh", "/data/wh"])
def test_warehouses_apart_from_the_lakehouse_files_are_accepted(warehouse) -> None:
    policy = LocationPolicy.for_lakehouse("/data/lake", warehouse)
    inside = (warehouse or "/data/lake/warehouse") + "/ns/t/metadata/1.json"
    assert policy.check(inside) == inside


def test_allow_list_covering_the_root_never_allows_the_lakehouse_files() -> None:
    policy = LocationPolicy.for_lakehouse("/data/lake", "/data/lake/warehouse", "/data")
    assert policy.allows("/data/other/t/1.json")
    assert policy.allows("/data/lake/warehouse/t/1.json")
    for own in ("/data/lake/0000/0001/1010/00000000-node-x.arrow", "/data/lake/_latest_hint.txt"):
        assert not policy.allows(own)
        with pytest.raises(LocationNotAllowedError, match="inside the lakehouse root"):
            policy.check(own, "metadata_location")


def test_through_the_catalog_api(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with pytest.raises(LocationNotAllowedError, match="lakehouse root"):
        lake.confinement(warehouse=str(tmp_path))
    assert lake.confinement().allows(lake.default_warehouse() + "/ns/t")
