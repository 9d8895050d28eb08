"""`Lakehouse.confinement()` and `is_inside_warehouse`: the one location rule
(trinityfs.catalog.locations) reached from the catalog API."""

from __future__ import annotations

import os

import pytest

from trinityfs.catalog import is_inside_warehouse
from trinityfs.errors import LocationNotAllowedError


@pytest.mark.parametrize(
    "location, inside",
    [
        ("s3://b/wh/ns/t/metadata/1.json", True),
        ("s3a://b/wh/ns/t", True),
        ("s3://b/wh2/x", False),
        ("s3://b/wh/../other/x", False),
        ("s3://b/wh/%2e%2e/other/x", False),
        ("s3://other/wh/x", False),
        ("/etc/passwd", False),
        ("", False),
    ],
)
def test_is_inside_warehouse(location, inside):
    assert is_inside_warehouse(location, "s3://b/wh") is inside
    assert is_inside_warehouse(location, "s3://x/y", ["s3://b/wh"]) is inside


def test_lakehouse_confinement_defaults_to_the_warehouse_under_the_root(lake, tmp_path):
    policy = lake.confinement()
    assert lake.default_warehouse() == lake.url.rstrip("/") + "/warehouse"
    assert policy.allows(lake.default_warehouse() + "/ns/t/metadata/00001.json")
    assert not policy.allows(lake.url.rstrip("/") + "/_latest_hint.txt")
    with pytest.raises(LocationNotAllowedError, match="metadata_location '/etc/passwd'") as e:
        policy.check("/etc/passwd", "metadata_location")
    assert e.value.location == "/etc/passwd"
    outside = tmp_path / "outside"
    outside.mkdir()
    wh = lake.default_warehouse().removeprefix("file://")
    os.makedirs(wh)
    os.symlink(outside, os.path.join(wh, "link"))
    assert not policy.allows(os.path.join(wh, "link", "x"))  # a planted symlink leads out
    assert lake.confinement(allowed="s3://shared/t").allows("s3://shared/t/x")
