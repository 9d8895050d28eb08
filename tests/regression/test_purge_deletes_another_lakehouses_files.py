"""Bug (issue 11 item 6): purge_table of a table whose definition pointed at another
lakehouse's metadata deleted that lakehouse's table files (metadata, manifests, data).

Now purge_table deletes no file at all (it drops the table from the catalog; files are
reclaimed later by reclaim_files, which only ever looks inside this catalog's warehouse)
and every read through the pointer is refused before it happens."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")

from tests.regression.iceberg_helpers import (
    files_under,
    make_lake,
    point_table_at,
    rows,
)
from trinityfs.iceberg import TrinityCatalog


def test_purge_leaves_another_lakehouses_files_alone(tmp_path: Path) -> None:
    victim_root = make_lake(tmp_path / "victim")
    victim = TrinityCatalog("victim", root=victim_root)
    victim.create_table("ns.t", rows(0).schema).append(rows(10))
    victim_files = files_under(tmp_path / "victim" / "warehouse")
    assert len(victim_files) >= 4  # metadata x2, manifest list, manifest, data

    root = make_lake(tmp_path / "lake")
    point_table_at(root, "ns", "t", victim.load_table("ns.t").metadata_location)
    catalog = TrinityCatalog("lake", root=root)
    catalog.purge_table("ns.t")
    assert not catalog.table_exists("ns.t")

    assert files_under(tmp_path / "victim" / "warehouse") == victim_files
    assert victim.load_table("ns.t").scan().to_arrow().num_rows == 10

    # and reclaiming (for real, no grace) never looks outside this lakehouse's warehouse
    report = catalog.reclaim_files(dry_run=False, older_than_seconds=0)
    assert report.problems == []
    assert files_under(tmp_path / "victim" / "warehouse") == victim_files
