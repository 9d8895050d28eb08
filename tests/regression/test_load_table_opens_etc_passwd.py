"""Bug (issue 11 item 6): a table definition whose metadata_location named /etc/passwd
made TrinityCatalog.load_table open the file, and its content came back in the error.

Now every location is checked against the lakehouse's warehouse (plus the configured
allow-list) BEFORE anything is read: a typed LocationNotAllowedError names the location
and never quotes a foreign file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")

from tests.regression.iceberg_helpers import make_lake, point_table_at
from trinityfs.errors import LocationNotAllowedError
from trinityfs.iceberg import TrinityCatalog

SECRET = "TOP-SECRET-CONTENT-7f3a"


@pytest.mark.parametrize("target", ["/etc/passwd", "secret"])
def test_load_table_refuses_a_metadata_location_outside_the_warehouse(
    tmp_path: Path, target: str
) -> None:
    root = make_lake(tmp_path / "lake")
    if target == "secret":
        secret = tmp_path / "secret.json"
        secret.write_text(SECRET)
        target = str(secret)
    elif not os.path.exists(target):
        pytest.skip("no /etc/passwd here")
    point_table_at(root, "ns", "t", target)
    catalog = TrinityCatalog("lake", root=root)
    with pytest.raises(LocationNotAllowedError) as info:
        catalog.load_table("ns.t")
    message = str(info.value)
    assert target in message
    assert SECRET not in message and "root:" not in message
    assert info.value.location == target


def test_symlink_inside_the_warehouse_pointing_outside_is_outside(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    secret = tmp_path / "secret.json"
    secret.write_text(SECRET)
    link_dir = tmp_path / "lake" / "warehouse" / "ns" / "t" / "metadata"
    link_dir.mkdir(parents=True)
    (link_dir / "00000-x.metadata.json").symlink_to(secret)
    point_table_at(root, "ns", "t", str(link_dir / "00000-x.metadata.json"))
    with pytest.raises(LocationNotAllowedError) as info:
        TrinityCatalog("lake", root=root).load_table("ns.t")
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "suffix",
    ["/../../secret.json", "/%2e%2e/%2e%2e/secret.json", "2/ns/t/metadata/x.metadata.json"],
)
def test_dot_dot_and_sibling_prefixes_are_outside(tmp_path: Path, suffix: str) -> None:
    root = make_lake(tmp_path / "lake")
    (tmp_path / "secret.json").write_text(SECRET)
    location = str(tmp_path / "lake" / "warehouse") + suffix
    point_table_at(root, "ns", "t", location)
    with pytest.raises(LocationNotAllowedError):
        TrinityCatalog("lake", root=root).load_table("ns.t")


def test_garbage_inside_the_warehouse_is_a_typed_error_without_its_content(
    tmp_path: Path,
) -> None:
    from pyiceberg.exceptions import NoSuchIcebergTableError

    root = make_lake(tmp_path / "lake")
    bad = tmp_path / "lake" / "warehouse" / "ns" / "t" / "metadata" / "00000-x.metadata.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"format-version": 2, "garbage": "' + SECRET + '"}')
    point_table_at(root, "ns", "t", str(bad))
    with pytest.raises(NoSuchIcebergTableError) as info:
        TrinityCatalog("lake", root=root).load_table("ns.t")
    assert SECRET not in str(info.value)
    assert str(bad) in str(info.value)


def test_allow_list_admits_a_configured_prefix(tmp_path: Path) -> None:
    """The allow-list is configurable: a location under an allowed prefix is followed."""
    from tests.regression.iceberg_helpers import rows

    other = make_lake(tmp_path / "other")
    src = TrinityCatalog("other", root=other)
    table = src.create_table("ns.t", rows(0).schema)
    table.append(rows(3))
    root = make_lake(tmp_path / "lake")
    point_table_at(root, "ns", "t", src.load_table("ns.t").metadata_location)
    with pytest.raises(LocationNotAllowedError):
        TrinityCatalog("lake", root=root).load_table("ns.t")
    allowed = TrinityCatalog(
        "lake", root=root, **{"allowed-locations": str(tmp_path / "other" / "warehouse")}
    )
    assert allowed.load_table("ns.t").scan().to_arrow().num_rows == 3
