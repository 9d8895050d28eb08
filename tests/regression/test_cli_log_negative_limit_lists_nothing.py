"""Regression: `trinityfs log -n -5` printed an empty table and exit status 0 (the
range of versions it computed was empty), as if the lakehouse had no history. A
negative count is bad input: one line naming it, status 2, like any bad argument.
Found 2026-11-24 (helper adversary2); 1 of 2 fail on 19421b2.
"""

from __future__ import annotations

from regression_cli import run, sample


def test_a_negative_limit_is_refused(tmp_path) -> None:
    root = str(tmp_path / "lake")
    sample(root)
    result = run(root, "log", "-n", "-5")
    assert result.status == 2
    assert "--limit" in result.err and "negative" in result.err
    assert "Traceback" not in result.err


def test_a_limit_still_limits(tmp_path) -> None:
    root = str(tmp_path / "lake")
    sample(root)
    lines = run(root, "log", "-n", "2").out.strip().splitlines()
    assert len(lines) == 3  # the header and two versions
