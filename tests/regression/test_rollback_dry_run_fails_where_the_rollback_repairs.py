"""Review R8 of 30ce2a8: `trinityfs rollback --dry-run V` failed with the error about the
latest (invalid) lakehouse definition that the real `rollback V` repairs: the cautious
path was the one that failed. Now the dry run says the rollback would repair the latest
definition, what it would take from V, and prints the --if-latest command; exit 0,
nothing written. Lakehouse.rollback_repair_preview is the catalog's answer."""

from __future__ import annotations

import json

from regression_cli import run
from test_latest_lakehouse_def_invalid_cannot_be_repaired import _property, foreign_commit, history

from trinityfs import Lakehouse


def test_dry_run_says_what_the_repair_would_do(tmp_path) -> None:
    root = str(tmp_path / "lake")
    lake, target = history(root)
    bad_version = foreign_commit(lake, _property)
    result = run(root, "rollback", "--dry-run", str(target))
    assert result.status == 0, result.err
    assert f"rollback to version {target} would repair the latest definition" in result.out
    assert "property version.max-age-millis" in result.out
    assert f"--if-latest {bad_version}" in result.out
    assert Lakehouse.open(root).latest_version() == bad_version  # nothing written
    data = json.loads(run(root, "--json", "rollback", "--dry-run", str(target)).out)
    assert data["dry_run"] is True and data["changes"] is None
    assert data["repairs_definition"]["fields_from_target"] == ["property version.max-age-millis"]
    done = run(root, "rollback", str(target), "--if-latest", str(bad_version))
    assert done.status == 0, done.err
    assert Lakehouse.open(root).latest_version() == bad_version + 1


def test_preview_is_none_when_the_definition_passes(tmp_path) -> None:
    """Guard: a healthy lakehouse's dry run is the usual diff."""
    root = str(tmp_path / "lake")
    lake, target = history(root)
    assert lake.rollback_repair_preview(target) is None
    result = run(root, "rollback", "--dry-run", str(target))
    assert result.status == 0 and "would change" in result.out
