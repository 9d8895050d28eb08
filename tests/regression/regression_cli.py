"""Running `trinityfs` for the regression tests: in-process, and as a real process
(thin wrappers over tests/frontend_fixtures.py, which tests/cli uses too)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from frontend_fixtures import REPO, Result, cli_process, run_cli

__all__ = ["REPO", "Result", "process", "run", "sample", "unprivileged_process"]


def run(root: str, *args: str, stdin: str = "") -> Result:
    """`trinityfs --root ROOT ARGS...` in this process, stdin not a terminal."""
    return run_cli(["--root", root, *args], stdin=io.StringIO(stdin))


def sample(root: str) -> None:
    """A lakehouse with namespace sales holding table orders and view big_orders."""
    assert run(root, "init").status == 0
    assert run(root, "mkdir", "/sales").status == 0
    table = '{"kind": "table", "definition": {"table_format": "ICEBERG"}}'
    view = '{"kind": "view", "definition": {"properties": {"sql": "select 1"}}}'
    from trinityfs.fs.spec import TrinityFileSystem

    fs = TrinityFileSystem(root=root, skip_instance_cache=True, storage_options={"fsync": False})
    for name, text in (("orders", table), ("big_orders", view)):
        fs.write_definition(f"/sales/{name}", text.encode())


def process(root: str, *args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    """The real command with ROOT, its streams piped (stdin empty)."""
    pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return cli_process(args, root, env, **{**pipes, **kw})


def unprivileged_process(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m trinityfs.cli --root ROOT ARGS...` as a real process that file modes
    apply to: as root, without the capabilities to override them (`setpriv`; the test
    is skipped where it is missing). Runs the checkout the test imported."""
    import trinityfs

    code = Path(trinityfs.__file__).resolve().parents[1]
    drop: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: file modes cannot be enforced")
        drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    command = [*drop, sys.executable, "-m", "trinityfs.cli", "--root", str(root), *args]
    env = {**os.environ, "PYTHONPATH": str(code)}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
