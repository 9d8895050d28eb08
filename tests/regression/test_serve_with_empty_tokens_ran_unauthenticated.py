"""`trinityfs serve --tokens ''` (e.g. `--tokens "$TOKENS"` with the variable unset)
served with no authentication on loopback without a word: an empty value read as "no
--tokens" (life6's CLI probe). Now it is one line and exit 1, nothing served."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from trinityfs import Lakehouse


@pytest.mark.parametrize("value", ["", "  "])
@pytest.mark.parametrize(
    "command",
    [["trinityfs.cli", "--root", "{root}", "serve"], ["trinityfs.rest", "--root", "{root}"]],
)
def test_an_empty_tokens_value_is_refused_in_one_line(tmp_path, command, value):
    root = str(tmp_path / "lake")
    Lakehouse.create(root)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cmd = [sys.executable, "-m", *(c.format(root=root) for c in command), "--port", "0"]
    proc = subprocess.run(
        [*cmd, "--tokens", value], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--tokens needs a file name" in lines[0], proc.stderr
