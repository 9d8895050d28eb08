"""Running the trinityfs command: in-process (fast) and as a real subprocess."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from frontend_fixtures import Result, cli_process, run_cli


@pytest.fixture
def root(tmp_path) -> str:
    return str(tmp_path / "lake")


@pytest.fixture
def run(root, monkeypatch):
    """Run `trinityfs --root <root> ARGS...` in this process."""
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", '{"fsync": false}')

    def run_(*args: str, stdin: bytes | None = None, root_arg: bool = True) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        return run_cli((["--root", root] if root_arg else []) + list(args))

    return run_


@pytest.fixture
def run_process(root):
    """Run the real command, `python -m trinityfs.cli`, in a subprocess."""

    def run_(
        *args: str, stdin: bytes | None = None, env: dict | None = None, cwd: str | None = None
    ) -> Result:
        proc = cli_process(
            args,
            root,
            env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = proc.communicate(stdin, timeout=120)
        return Result(proc.returncode, out.decode(), err.decode())

    return run_


@pytest.fixture
def sample(run):
    """A lakehouse with sales (owner=analytics), sales.orders, sales.big_orders (view)."""
    assert run("init").status == 0
    assert run("mkdir", "/sales", "--property", "owner=analytics").status == 0
    table = b'{"kind": "table", "definition": {"table_format": "ICEBERG"}}'
    view = b'{"kind": "view", "definition": {"properties": {"sql": "select 1"}}}'
    assert run("put", "-", "/sales/orders", stdin=table).status == 0
    assert run("put", "-", "/sales/big_orders", stdin=view).status == 0
    return run
