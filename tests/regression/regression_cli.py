"""Running `trinityfs` for the regression tests: in-process, and as a real process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    status: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


class _Out(io.StringIO):
    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()

    def text(self) -> str:
        return self.getvalue() + self.buffer.getvalue().decode()


def run(root: str, *args: str, stdin: str = "") -> Result:
    """`trinityfs --root ROOT ARGS...` in this process, stdin not a terminal."""
    from trinityfs.cli import main

    out, err = _Out(), io.StringIO()
    status = main(["--root", root, *args], stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return Result(status, out.text(), err.getvalue())


def sample(root: str) -> None:
    """A lakehouse with namespace sales holding table orders and view big_orders."""
    os.environ.setdefault("TRINITYFS_STORAGE_OPTIONS", '{"fsync": false}')
    assert run(root, "init").status == 0
    assert run(root, "mkdir", "/sales").status == 0
    table = '{"kind": "table", "definition": {"table_format": "ICEBERG"}}'
    view = '{"kind": "view", "definition": {"properties": {"sql": "select 1"}}}'
    for name, text in (("orders", table), ("big_orders", view)):
        from trinityfs.fs.spec import TrinityFileSystem

        fs = TrinityFileSystem(root=root, skip_instance_cache=True)
        fs.write_definition(f"/sales/{name}", text.encode())


def process(root: str, *args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    environment = {**os.environ, "TRINITYFS_ROOT": root, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "trinityfs.cli", *args],
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )
