"""Bug (issue 11 item 6): purge_table deleted the table's files at once, so reading the
table at an older catalog version (time travel, exports, rollback) failed with an
untyped FileNotFoundError; files of dropped or rolled-back tables were never reclaimed.

Now purge only drops the table; the files stay while any kept catalog version
references them, and reclaim_files (opt-in, dry run by default) deletes exactly the table
files no kept version references."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")

from tests.regression.iceberg_helpers import files_under, make_lake, rows
from trinityfs import Lakehouse
from trinityfs.errors import StorageFileNotFoundError
from trinityfs.iceberg import TrinityCatalog


def test_older_version_still_reads_after_purge(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    catalog = TrinityCatalog("lake", root=root)
    catalog.create_table("ns.t", rows(0).schema).append(rows(25))
    before = catalog.current_version()
    catalog.purge_table("ns.t")
    assert not catalog.table_exists("ns.t")
    old = catalog.at(before).load_table("ns.t")
    assert old.scan().to_arrow().num_rows == 25


def test_reclaim_deletes_only_files_no_kept_version_references(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    warehouse = tmp_path / "lake" / "warehouse"
    catalog = TrinityCatalog("lake", root=root)
    catalog.create_table("ns.gone", rows(0).schema).append(rows(5))
    catalog.create_table("ns.kept", rows(0).schema).append(rows(7))
    gone_files = files_under(warehouse / "ns" / "gone")
    kept_files = files_under(warehouse / "ns" / "kept")
    orphan = warehouse / "ns" / "kept" / "data" / "00000-orphan.parquet"
    orphan.write_bytes(b"left by a job that never committed")
    catalog.purge_table("ns.gone")

    # every version is still kept: only the orphan is unreferenced
    report = catalog.reclaim_files(older_than_seconds=0)
    assert report.dry_run and report.unreferenced == [
        f"{catalog.properties['warehouse']}/ns/kept/data/00000-orphan.parquet"
    ]
    assert orphan.exists()  # a dry run deletes nothing
    # the grace period keeps young files
    assert catalog.reclaim_files().unreferenced == []

    # expire every version but the latest: the purged table's files become unreferenced
    from expire_clock import expiring_later  # past expiration's grace floor

    lake = Lakehouse.open(root)
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert lake.oldest_version() == lake.latest_version()
    report = catalog.reclaim_files(dry_run=False, older_than_seconds=0)
    assert report.deleted == len(gone_files) + 1
    assert files_under(warehouse / "ns" / "gone") == set()
    assert files_under(warehouse / "ns" / "kept") == kept_files
    assert catalog.load_table("ns.kept").scan().to_arrow().num_rows == 7


def test_reading_a_version_whose_files_are_gone_is_a_typed_error(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    catalog = TrinityCatalog("lake", root=root)
    table = catalog.create_table("ns.t", rows(0).schema)
    Path(table.metadata_location.removeprefix("file://")).unlink()
    with pytest.raises(StorageFileNotFoundError) as info:
        catalog.load_table("ns.t")
    assert "ns.t" in str(info.value)
