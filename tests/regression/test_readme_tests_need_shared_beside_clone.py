"""Issue 11 item 9: the README's test command, run in a clone made anywhere else, stopped on
a collection error (tests read ../shared/vectors, which the repository does not ship)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_test_collects_in_a_clone_with_nothing_beside_it(tmp_path):
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    clone = tmp_path / "elsewhere" / "trinityfs"
    subprocess.run(
        ["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)],
        check=True,
        capture_output=True,
    )
    # the clone holds the committed tree of HEAD; the working tree's own edits are not in it
    for relative in subprocess.run(
        ["git", "ls-files", "--modified", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split():
        source = REPO / relative
        if source.is_file():
            (clone / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / relative)
    assert not (clone.parent / "shared").exists()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone,
        env={**os.environ, "PYTHONPATH": str(clone)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = proc.stdout.strip().splitlines()[-1:]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "error" not in tail[0], tail
    assert " collected" in tail[0] or "tests collected" in tail[0], tail
