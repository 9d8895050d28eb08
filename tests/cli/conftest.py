"""Running the trinityfs command: in-process (fast) and as a real subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from trinityfs.cli import main


@dataclass
class Result:
    status: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


class BytesOut(io.StringIO):
    """A stdout whose `buffer` collects raw bytes too (for cat)."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()

    def text(self) -> str:
        return self.getvalue() + self.buffer.getvalue().decode("utf-8")


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
        out, err = BytesOut(), io.StringIO()
        argv = (["--root", root] if root_arg else []) + list(args)
        status = main(argv, stdout=out, stderr=err)
        return Result(status, out.text(), err.getvalue())

    return run_


@pytest.fixture
def run_process(root):
    """Run the real command, `python -m trinityfs.cli`, in a subprocess."""

    def run_(
        *args: str, stdin: bytes | None = None, env: dict | None = None, cwd: str | None = None
    ) -> Result:
        environment = {**os.environ, "TRINITYFS_ROOT": root, **(env or {})}
        proc = subprocess.run(
            [sys.executable, "-m", "trinityfs.cli", *args],
            input=stdin,
            capture_output=True,
            env=environment,
            cwd=cwd,
            timeout=120,
        )
        return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

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
