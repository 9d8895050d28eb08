"""Confinement of table and metadata locations to the warehouse (and an allow-list)."""

from __future__ import annotations

import os

import pytest

from trinityfs.catalog import Confinement, check_inside_warehouse, is_inside_warehouse
from trinityfs.errors import InvalidArgumentError, OutsideWarehouseError


@pytest.mark.parametrize(
    "location, inside",
    [
        ("s3://b/wh/ns/t/metadata/1.json", True),
        ("s3a://b/wh/ns/t", True),
        ("s3://b/wh", True),
        ("s3://b/wh2/x", False),
        ("s3://b/wh/../other/x", False),
        ("s3://b/wh/./x/../y", True),
        ("s3://b//wh/x", True),
        ("s3://other/wh/x", False),
        ("s3://b/wh/x?versionId=1", False),
        ("s3://b/wh/x#frag", False),
        ("gs://b/wh/x", False),
        ("/etc/passwd", False),
        ("", False),
        ("s3:///wh", False),
    ],
)
def test_object_store_locations(location, inside):
    assert is_inside_warehouse(location, "s3://b/wh") is inside


def test_local_paths_resolve_dots_percent_escapes_and_symlinks(tmp_path):
    wh = tmp_path / "wh"
    (wh / "ns").mkdir(parents=True)
    outside = tmp_path / "secret"
    outside.mkdir()
    os.symlink(outside, wh / "ns" / "link")
    c = Confinement(str(wh))
    assert c.contains(str(wh / "ns" / "t" / "m.json"))
    assert c.contains(f"file://{wh}/ns/t")
    assert not c.contains(f"{wh}/../secret/x")
    assert not c.contains(f"file://{wh}/%2e%2e/secret/x")
    assert not c.contains(str(wh / "ns" / "link" / "x"))  # a planted symlink leads out
    assert not c.contains("file://otherhost/x")
    assert not c.contains("/etc/passwd")


def test_allow_list_and_typed_error():
    c = Confinement("memory://lake/warehouse", ["s3://shared/tables"])
    assert c.contains("s3://shared/tables/x") and c.contains("memory:///lake/warehouse/t")
    with pytest.raises(OutsideWarehouseError, match="'/etc/passwd' is outside") as e:
        c.check("/etc/passwd", "metadata_location")
    assert e.value.location == "/etc/passwd" and "metadata_location" in str(e.value)
    assert check_inside_warehouse("s3://shared/tables/y", "s3://x/wh", ["s3://shared/tables"])


def test_the_warehouse_may_not_contain_the_lakehouse(lake):
    c = lake.confinement()
    root = lake.url.rstrip("/")
    assert c.warehouse == root + "/warehouse"
    assert c.contains(root + "/warehouse/ns/t") and c.contains(lake.url + "/warehouse/t")
    assert not c.contains(root + "/_latest_hint.txt")
    with pytest.raises(InvalidArgumentError, match="contains the lakehouse root"):
        lake.confinement(lake.url)
    with pytest.raises(InvalidArgumentError, match="not a usable"):
        Confinement("s3://b/wh", ["s3:///"])
