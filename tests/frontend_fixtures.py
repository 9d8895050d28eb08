"""Helpers shared by the front-end tests (tests/cli, tests/iceberg, tests/rest and the
CLI regression tests): a lakehouse root, and running the `trinityfs` command in this
process or as a real one."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

import pytest

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


@pytest.fixture
def lake_root(tmp_path: Path) -> str:
    """A new, empty lakehouse in a local directory."""
    from trinityfs import Lakehouse

    root = tmp_path / "lake"
    Lakehouse.create(str(root))
    return str(root)


def stopping(make: Callable[..., T], stop: str = "stop") -> Iterator[Callable[..., T]]:
    """For a fixture: yields `make`, remembering what it made; calls each one's `stop`
    method (servers, catalogs) once the test is over."""
    made: list[T] = []

    def start(*args: Any, **kwargs: Any) -> T:
        thing = make(*args, **kwargs)
        made.append(thing)
        return thing

    yield start
    for thing in made:
        getattr(thing, stop)()


@dataclass
class Result:
    """What a run of the command left: exit status, standard output and error."""

    status: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class BytesOut(io.StringIO):
    """A stdout whose `buffer` collects raw bytes too (for cat)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = io.BytesIO()

    def text(self) -> str:
        return self.getvalue() + self.buffer.getvalue().decode("utf-8")


def run_cli(argv: Sequence[str], stdin: TextIO | None = None) -> Result:
    """`trinityfs ARGV...` in this process."""
    from trinityfs.cli import main

    out, err = BytesOut(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err, stdin=stdin)
    return Result(status, out.text(), err.getvalue())


def cli_process(
    args: Sequence[str], root: str, env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen:
    """The real command, `python -m trinityfs.cli ARGS...`, with $TRINITYFS_ROOT=root and
    this checkout first on the module path."""
    environment = {
        **os.environ,
        "TRINITYFS_ROOT": root,
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
        **(env or {}),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "trinityfs.cli", *args], env=environment, **popen
    )


__all__ = ["REPO", "BytesOut", "Result", "cli_process", "lake_root", "run_cli", "stopping"]
