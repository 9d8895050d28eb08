"""Regression (life5): a version stamped in the future blocked expiration silently.

A writer whose clock ran a year ahead stamps its version a year ahead, and every later
version is stamped after it (max(now, previous + 1)). Expiration by age and grace then
keeps that version and every later one for a year: storage grows and nothing said why
(the report said "kept by the grace period", fsck said ok with no word). Expiration
still keeps them (it never deletes on a guessed age), but now its report
(`future_stamp`), its log (one warning line in the CLI) and fsck (a "clock" warning)
name the version, its stamp and how far ahead it is."""

from __future__ import annotations

import json
import logging

from expire_clock import expiring_later
from future_stamps import YEAR_MS, lake_with_a_future_stamp
from regression_cli import run

from trinityfs import Lakehouse


def _skewed_lake(tmp_path, monkeypatch) -> tuple[Lakehouse, int]:
    lake = lake_with_a_future_stamp(str(tmp_path / "lake"), monkeypatch)  # 2 ahead, 3..5
    return lake, lake.version_info(2).created_at_millis


class _Recorded(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_expire_report_names_the_version_and_its_stamp(tmp_path, monkeypatch) -> None:
    lake, stamp = _skewed_lake(tmp_path, monkeypatch)
    recorded = _Recorded()  # on the module's logger: the CLI tests stop propagation
    logger = logging.getLogger("trinityfs.lifecycle.expire")
    logger.addHandler(recorded)
    try:
        with expiring_later():
            report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    finally:
        logger.removeHandler(recorded)
    assert report.oldest_version == 1  # still kept: no deletion on a guessed age
    ahead = report.to_dict()["future_stamp"]
    assert ahead is not None, report.to_dict(files=False)
    assert ahead["version"] == 2 and ahead["created_at_millis"] == stamp
    assert ahead["ahead_millis"] > YEAR_MS - 86_400_000
    assert any(f"version 2 is stamped {stamp}" in r.getMessage() for r in recorded.records)


def test_fsck_warns_and_stays_ok(tmp_path, monkeypatch) -> None:
    lake, stamp = _skewed_lake(tmp_path, monkeypatch)
    report = Lakehouse.open(lake.url).fsck()
    assert report.ok
    clock = [w for w in report.warnings if w.kind == "clock"]
    assert len(clock) == 1 and clock[0].version == 2, report.warnings
    assert f"version 2 is stamped {stamp}" in clock[0].message


def test_cli_expire_warns_in_one_line(tmp_path, monkeypatch) -> None:
    lake, stamp = _skewed_lake(tmp_path, monkeypatch)
    result = run(lake.url, "expire", "--max-age", "1d", "--min-versions", "1")
    assert result.status == 0, result.err
    warnings = [line for line in result.err.splitlines() if f"is stamped {stamp}" in line]
    assert len(warnings) == 1 and warnings[0].startswith("trinityfs: warning: version 2 ")
    data = json.loads(run(lake.url, "--json", "expire", "--dry-run").out)
    assert data["future_stamp"]["version"] == 2


def test_no_word_without_a_future_stamp(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("a")
    assert lake.expire().future_stamp is None
    assert not [w for w in lake.fsck().warnings if w.kind == "clock"]
