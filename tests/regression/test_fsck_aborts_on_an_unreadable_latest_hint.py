"""`_latest_hint.txt` is advisory: readers and writers that cannot read it (EACCES, a
store that refuses the object) log it and find the latest version by probing. fsck
instead stopped with "read of '_latest_hint.txt' ... failed: PermissionError" (a
StorageError, exit 1) and checked nothing. It now reports the unreadable hint as a
warning naming the error and checks the rest (found by txn7's EACCES probe).

Real refusal: the hint's mode is 000 and the command runs without the capability to
override file modes (as root: `setpriv --bounding-set=-dac_override`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trinityfs
from trinityfs import Lakehouse
from trinityfs.format.paths import LATEST_HINT

CODE = Path(trinityfs.__file__).resolve().parents[1]  # the checkout this test imported


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: file modes cannot be enforced")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    command = [*_unprivileged(), sys.executable, "-m", "trinityfs.cli", "--root", str(root)]
    return subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=120)


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
    listed = _cli(lake_dir, "ls")
    assert listed.returncode == 0, listed.stderr  # readers go on without the hint
    done = _cli(lake_dir, "--json", "fsck")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True, report
    warnings = [p for p in report["warnings"] if p["location"] == LATEST_HINT]
    assert warnings and "cannot be read" in warnings[0]["message"], report["warnings"]
    assert report["nodes_checked"] >= 2  # the rest was checked
