"""Regression (life5): `ExpireReport.expired_versions` was negative, and the report
named an oldest version readers refuse.

A true `_oldest_version.txt` above the latest `min_versions` versions (a stricter
expiration ran before, or crashed between writing the marker and deleting the roots)
made expiration keep the roots below the marker (it never deletes the latest
min_versions roots) and report them as the oldest readable version: `oldest_version`
8 while the marker, which readers obey, said 10, and `expired_versions` -2. The CLI
printed "versions 10..7 expired". Now the report says what readers can read and counts
only the versions this run made unreadable (never negative)."""

from __future__ import annotations

import json

from expire_clock import expiring_later
from regression_cli import run

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION, root_node_file


def _lake(tmp_path) -> Lakehouse:
    """Versions 0..12, every root there, a true marker saying 10 (as a crashed run of
    `expire --min-versions 3` leaves it)."""
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("a")
    for i in range(11):
        lake.create_table("a", f"t{i}")
    assert lake.latest_version() == 12
    lake.storage.write(OLDEST_VERSION, b"10")
    return lake


def test_report_never_counts_versions_back(tmp_path) -> None:
    lake = _lake(tmp_path)
    for dry_run in (True, False):
        with expiring_later():
            report = lake.expire(max_age_millis=0, min_versions=5, dry_run=dry_run, grace_millis=0)
        assert report.expired_versions == 0, report.to_dict(files=False)
        assert report.previous_oldest_version == 10
        assert report.oldest_version == 10 == Lakehouse.open(lake.url).oldest_version()
        assert report.to_dict()["expired_versions"] == 0
    assert lake.storage.exists(root_node_file(10))
    assert Lakehouse.open(lake.url).fsck().ok


def test_cli_never_prints_a_backwards_range(tmp_path) -> None:
    lake = _lake(tmp_path)
    with expiring_later():
        text = run(lake.url, "expire", "--max-age", "0s", "--min-versions", "5", "--grace", "0s")
        data = run(
            lake.url, "--json", "expire", "--max-age", "0s", "--min-versions", "5", "--grace", "0s"
        )
    assert text.status == 0, text.err
    assert text.out.startswith("no version expired; readable: 10..12"), text.out
    assert data.status == 0, data.err
    out = json.loads(data.out)
    assert out["expired_versions"] == 0 and out["oldest_version"] == 10
