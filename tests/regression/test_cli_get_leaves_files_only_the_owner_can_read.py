"""Regression: `trinityfs get` and `trinityfs sync trinity://ns ./dir` wrote local files
with mkstemp's mode 0600 whatever the umask, and replacing an existing file reset its
mode to 0600 too (the atomic write renames a temporary file over it): a definition
fetched for a team's shared folder was unreadable to the others, and a 0644 file turned
0600 on the next sync. Now a new file gets the umask's mode (0644 under 022), a replaced
file keeps its own. Found 2026-11-24 (helper adversary2); 3 of 3 fail on 19421b2.
"""

from __future__ import annotations

import os
import stat

import pytest
from regression_cli import run, sample


@pytest.fixture
def root(tmp_path) -> str:
    path = str(tmp_path / "lake")
    sample(path)
    return path


@pytest.fixture(autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_get_to_a_new_file_follows_the_umask(root, tmp_path) -> None:
    target = tmp_path / "orders.json"
    assert run(root, "get", "/sales/orders", str(target)).status == 0
    assert _mode(target) == 0o644


def test_get_over_an_existing_file_keeps_its_mode(root, tmp_path) -> None:
    target = tmp_path / "orders.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    assert run(root, "get", "/sales/orders", str(target)).status == 0
    assert _mode(target) == 0o640 and target.read_text() != "old"


def test_sync_down_follows_the_umask(root, tmp_path) -> None:
    folder = tmp_path / "sales"
    assert run(root, "sync", "trinity://sales", str(folder)).status == 0
    files = sorted(folder.iterdir())
    assert files and all(_mode(f) == 0o644 for f in files)
