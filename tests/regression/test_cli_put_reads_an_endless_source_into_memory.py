"""Regression: `trinityfs put SOURCE DEST` (and `put -`, `txn put`, `sync` up) read the
whole source into memory before looking at it: `put /dev/zero /ns/t` (or a data file
given by mistake) grew until the process ran out of memory ("internal error:
MemoryError" under a 1 GiB limit, the machine's memory without one). A definition file
is read only up to 64 MiB now, like the mount's writes (EFBIG) and `load`'s lines: one
line naming the source, a non-zero status, nothing committed. Found 2026-11-24 (helper
adversary); fails on e0c4099.
"""

from __future__ import annotations

import resource
import subprocess

import pytest
from frontend_fixtures import cli_process

from trinityfs import Lakehouse

LIMIT = 1 << 30  # address space of the command: the old code dies of MemoryError


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.fixture
def root(tmp_path) -> str:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    return str(tmp_path / "lake")


def _run(root: str, args: list[str], stdin=None) -> tuple[int, str]:
    proc = cli_process(
        args,
        root,
        {"TRINITYFS_STORAGE_OPTIONS": '{"fsync": false}'},
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limited,
    )
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.decode()


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_put_of_an_endless_source_is_refused_in_one_line(root, how):
    before = Lakehouse.open(root).latest_version()
    if how == "file":
        status, err = _run(root, ["put", "/dev/zero", "/ns/t"])
        named = "/dev/zero"
    else:
        with open("/dev/zero", "rb") as zero:
            status, err = _run(root, ["put", "-", "/ns/t"], stdin=zero)
        named = "stdin"
    assert status != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "64 MiB" in lines[0], err
    assert "MemoryError" not in err
    assert Lakehouse.open(root).latest_version() == before


def test_a_definition_below_the_limit_still_puts(root, tmp_path):
    source = tmp_path / "t.json"
    source.write_text('{"kind": "table", "definition": {"properties": {"a": "1"}}}')
    status, err = _run(root, ["put", str(source), "/ns/t"])
    assert status == 0, err
    assert Lakehouse.open(root).list_tables("ns") == ["t"]
