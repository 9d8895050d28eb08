"""Table locations confined to the lakehouse's warehouse (plus `allowed-locations`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from trinityfs.catalog.locations import LocationPolicy, canonical
from trinityfs.errors import LocationNotAllowedError

SCHEMA = pa.schema([pa.field("id", pa.int64())])


@pytest.mark.parametrize(
    ("allowed", "location", "ok"),
    [
        ("s3://b/lake/warehouse", "s3a://b/lake/warehouse/ns/t", True),
        ("s3://b/lake/warehouse", "s3://b/lake/warehouse2/ns/t", False),
        ("s3://b/lake/warehouse", "s3://other/lake/warehouse/ns/t", False),
        ("s3://b/lake/warehouse", "s3://b/lake/warehouse/../secrets", False),
        ("s3://b/lake/warehouse", "s3://b/lake/warehouse/%2E%2E/secrets", False),
        ("s3://b/lake/warehouse/", "s3://b/lake/warehouse/ns/t/", True),
        ("memory://lake/warehouse", "memory:///lake/warehouse/ns/t", True),
        ("/lake/warehouse", "file:///lake/warehouse/ns/t", True),
        ("/lake/warehouse", "file://evil-host/lake/warehouse/ns/t", False),
        ("/lake/warehouse", "gs://lake/warehouse/ns/t", False),
        ("/lake/warehouse", "", False),
        ("*", "s3://anything/at/all", True),  # the explicit opt-out (REST --allow-any-location)
    ],
)
def test_policy_containment(allowed: str, location: str, ok: bool) -> None:
    policy = LocationPolicy([allowed])
    assert policy.allows(location) is ok
    if not ok:
        with pytest.raises(LocationNotAllowedError) as info:
            policy.check(location, "table location")
        assert info.value.location == location


def test_canonical_resolves_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "wh").mkdir()
    (tmp_path / "wh" / "link").symlink_to(tmp_path / "real")
    assert canonical(str(tmp_path / "wh" / "link" / "x")).path == str(tmp_path / "real" / "x")


def test_create_table_with_a_location_outside_is_refused(catalog, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    with pytest.raises(LocationNotAllowedError, match="outside"):
        catalog.create_table("sales.t", SCHEMA, location=str(outside))
    assert not outside.exists()
    assert not catalog.table_exists("sales.t")


def test_create_table_with_a_location_inside_is_fine(catalog) -> None:
    inside = catalog.properties["warehouse"] + "/custom/place"
    table = catalog.create_table("sales.t", SCHEMA, location=inside)
    assert table.location() == inside


def test_namespace_location_outside_is_refused(catalog, tmp_path: Path) -> None:
    with pytest.raises(LocationNotAllowedError):
        catalog.create_namespace("other", {"location": str(tmp_path / "x")})
    assert not catalog.namespace_exists("other")
    with pytest.raises(LocationNotAllowedError):
        catalog.update_namespace_properties("sales", updates={"location": "s3://x/y"})
    assert "location" not in catalog.load_namespace_properties("sales")


def test_register_table_outside_is_refused_before_reading(catalog, tmp_path: Path) -> None:
    secret = tmp_path / "secret.metadata.json"
    secret.write_text("TOP-SECRET")
    with pytest.raises(LocationNotAllowedError) as info:
        catalog.register_table("sales.t", str(secret))
    assert "TOP-SECRET" not in str(info.value)
    assert not catalog.table_exists("sales.t")


def test_commit_moving_the_table_or_its_write_paths_outside_is_refused(
    catalog, tmp_path: Path
) -> None:
    from pyiceberg.table.update import SetLocationUpdate

    table = catalog.create_table("sales.t", SCHEMA)
    with pytest.raises(LocationNotAllowedError), table.transaction() as txn:
        txn.set_properties({"write.data.path": str(tmp_path / "elsewhere")})
    with pytest.raises(LocationNotAllowedError):
        catalog.commit_table(table, (), (SetLocationUpdate(location=str(tmp_path / "elsewhere")),))
    table = catalog.load_table("sales.t")
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    assert catalog.load_table("sales.t").scan().to_arrow().num_rows == 2
    assert not (tmp_path / "elsewhere").exists()


def test_allowed_locations_property_extends_the_warehouse(open_catalog, tmp_path: Path) -> None:
    extra = tmp_path / "shared"
    cat = open_catalog(**{"allowed-locations": f"{extra}, s3://unused/x"})
    cat.create_namespace("ns")
    table = cat.create_table("ns.t", SCHEMA, location=str(extra / "t"))
    table.append(pa.table({"id": pa.array([1], pa.int64())}))
    assert cat.load_table("ns.t").scan().to_arrow().num_rows == 1
