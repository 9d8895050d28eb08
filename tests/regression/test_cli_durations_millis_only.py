"""Issue 11 item 7: durations were milliseconds only (`--max-age-millis 604800000`)."""

from __future__ import annotations

import argparse

import pytest
from regression_cli import run

from trinityfs.cli.context import duration, duration_text


def test_duration_units():
    assert duration("7d") == 7 * 86_400_000
    assert duration("12h") == 12 * 3_600_000
    assert duration("30m") == 1_800_000
    assert duration("500ms") == 500
    assert duration("1h30m") == 5_400_000
    assert duration("250") == 250  # a bare number stays millis
    for bad in ("", "7x", "d", "1h 2m", "-1d", "7dd"):
        with pytest.raises(argparse.ArgumentTypeError):
            duration(bad)
    assert duration_text(3 * 86_400_000) == "3d" and duration_text(5_400_000) == "1h30m"


def test_durations_on_the_command_line(tmp_path):
    root = str(tmp_path / "lake")
    assert run(root, "init", "--txn-ttl", "2h").status == 0
    assert run(root, "--json", "show").json()["definition"]["txn_ttl_millis"] == "7200000"
    result = run(root, "--json", "expire", "--dry-run", "--max-age", "7d", "--grace", "30m")
    policy = result.json()["policy"]
    assert policy["max_age_millis"] == 7 * 86_400_000 and policy["grace_millis"] == 1_800_000
    assert run(root, "txn", "begin", "--ttl", "10m").status == 0
    assert run(root, "expire", "--max-age", "7 days").status == 2
