"""`trinityfs` durations were summed as floats and rounded: a long one came out wrong
(`--ttl 99999999999999d` was refused as "got 8639999999999914016768", the exact value
being 8639999999999913600000; `--max-age 999999999999999999999w` was printed as
"7000000000000000123554d21h14s208ms"), and a fraction of a millisecond was rounded
half to even without a word (`--max-age 0.5ms` meant max age 0: every version old).
Now durations are computed exactly, and one that is no whole number of milliseconds is
refused."""

from __future__ import annotations

import argparse

import pytest
from regression_cli import run

from trinityfs.cli.context import duration, duration_text


def test_long_durations_are_exact() -> None:
    assert duration("99999999999999d") == 99999999999999 * 86_400_000
    assert duration("999999999999999999999w") == 999999999999999999999 * 604_800_000
    assert duration("1.5s") == 1500 and duration("0.25s") == 250
    assert duration("1h0.5m") == 3_630_000
    text = duration_text(duration("999999999999999999999w"))
    assert text == f"{999999999999999999999 * 7}d"


@pytest.mark.parametrize("text", ["0.5ms", "1.0005s", "0.0000001d"])
def test_a_fraction_of_a_millisecond_is_refused(text) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="whole number of milliseconds"):
        duration(text)


def test_the_command_names_the_exact_value(tmp_path) -> None:
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    result = run(root, "txn", "begin", "--ttl", "99999999999999d")
    assert result.status == 1
    assert "got 8639999999999913600000" in result.err, result.err
    refused = run(root, "expire", "--dry-run", "--max-age", "0.5ms")
    assert refused.status == 2 and "whole number of milliseconds" in refused.err
