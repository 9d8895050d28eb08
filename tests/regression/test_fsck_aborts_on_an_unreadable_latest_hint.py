"""`_latest_hint.txt` is advisory: readers and writers that cannot read it (EACCES, a
store that refuses the object) log it and find the latest version by probing. fsck
instead stopped with "read of '_latest_hint.txt' ... failed: PermissionError" (a
StorageError, exit 1) and checked nothing. It now reports the unreadable hint as a
warning naming the error and checks the rest (found by txn7's EACCES probe).

Real refusal: the hint's mode is 000 and the command runs without the capability to
override file modes (as root: `setpriv --bounding-set=-dac_override`)."""

from __future__ import annotations

import json

import pytest
from regression_cli import unprivileged_process

from trinityfs import Lakehouse
from trinityfs.format.paths import LATEST_HINT


@pytest.fixture
def lake_dir(tmp_path):
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root), storage_options={"fsync": False})
    for name in ("a", "b"):
        lake.create_namespace(name)
    hint = root / LATEST_HINT
    assert hint.exists()
    hint.chmod(0)
    yield root
    hint.chmod(0o644)


def test_fsck_warns_and_checks_the_rest(lake_dir) -> None:
    listed = unprivileged_process(lake_dir, "ls")
    assert listed.returncode == 0, listed.stderr  # readers go on without the hint
    done = unprivileged_process(lake_dir, "--json", "fsck")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True, report
    warnings = [p for p in report["warnings"] if p["location"] == LATEST_HINT]
    assert warnings and "cannot be read" in warnings[0]["message"], report["warnings"]
    assert report["nodes_checked"] >= 2  # the rest was checked
