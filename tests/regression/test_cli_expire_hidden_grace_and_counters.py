"""Issue 11 item 7: `expire --max-age-millis 0` expired nothing because of a grace period it
never mentioned, and printed ~45 internal counters."""

from __future__ import annotations

from regression_cli import run, sample


def test_expire_says_what_kept_versions_and_stays_short(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    result = run(root, "expire", "--max-age-millis", "0", "--min-versions", "1")
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) <= 8, result.out
    assert any(line.startswith("grace:") for line in lines), result.out
    assert "grace" in result.out and "--grace" in result.out
    assert "phase_seconds" not in result.out and "requests" not in result.out


def test_expire_json_has_the_counters(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    data = run(root, "--json", "expire", "--max-age", "0", "--grace", "0").json()
    assert {"files_removed", "bytes_removed", "policy", "requests"} <= set(data)
    # --grace 0 is raised to the floor (the longest a commit may take), and said so
    assert data["policy"]["grace_millis"] == data["policy"]["grace_floor_millis"] > 0
    text = run(root, "expire", "--dry-run", "--max-age", "0", "--grace", "0").out
    assert "grace floor:" in text, text
