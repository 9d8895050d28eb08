"""Regression: through the mount, a file emptied by O_TRUNC (or ftruncate to 0, or
`truncate -s0`) and closed without a write was committed at release, which the kernel
sends after close() has returned 0 without waiting for its answer: a commit that then
failed (a conflicting commit in between, a lakehouse refusing commits) was only logged,
so close() and `truncate` reported success for an emptying that never happened. A new
file created and closed without a write was the same. Now the last flush commits it
(the closing process holds no other descriptor of the file: a shell's `> file` closes
a dup before the command writes, and that flush still commits nothing), so close()
reports EBUSY / EIO and nothing is committed. Found 2026-11-24 (helper adversary2);
6 of 8 fail on 19421b2 (the dup and inherited-copy guards pass on both; the last, `: >` then
cat in one shell, found the old emptying not yet committed).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from tests.regression.fuse_mount import FUSE, mounted, one_table
from trinityfs import Lakehouse
from trinityfs.format.paths import root_node_file

pytestmark = FUSE

ICEBERG = {"table_format": "ICEBERG", "properties": {"owner": "ops"}}


@pytest.fixture
def root(tmp_path) -> str:
    return one_table(str(tmp_path / "lake"), ICEBERG)


def _refuse_commits(root: str) -> None:
    """A directory at the next root's name: every commit fails (CorruptFileError, EIO)."""
    lake = Lakehouse.open(root)
    os.mkdir(os.path.join(root, root_node_file(lake.latest_version() + 1)))


def _format(root: str) -> str:
    return Lakehouse.open(root).describe_table("ns", "t").table_format


@pytest.mark.parametrize("how", ["o_trunc", "ftruncate"])
def test_emptying_that_conflicts_fails_at_close(root: str, tmp_path, how: str) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        target = m.path / "ns" / "t"
        if how == "o_trunc":
            fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
        else:
            fd = os.open(target, os.O_WRONLY)
            os.ftruncate(fd, 0)
        Lakehouse.open(root).replace_table("ns", "t", {"table_format": "DELTA"})
        latest = m.latest()
        with pytest.raises(OSError) as err:
            os.close(fd)
        assert err.value.errno == errno.EBUSY
        assert m.latest() == latest
        assert _format(root) == "DELTA"  # the other writer's commit, not emptied
    assert "Traceback" not in m.log_text()


def test_emptying_with_open_o_trunc_fails_at_close_when_commits_fail(root, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        target = m.path / "ns" / "t"
        content = target.read_bytes()
        _refuse_commits(root)
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
        with pytest.raises(OSError) as err:
            os.close(fd)
        assert err.value.errno == errno.EIO
        assert target.read_bytes() == content
        assert _format(root) == "ICEBERG"


def test_truncate_tool_reports_a_failed_emptying(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        target = m.path / "ns" / "t"
        content = target.read_bytes()
        before = m.latest()
        _refuse_commits(root)
        result = subprocess.run(
            ["truncate", "-s0", str(target)], capture_output=True, text=True, timeout=60
        )
        assert result.returncode != 0, result
        assert "Input/output error" in result.stderr, result.stderr
        assert target.read_bytes() == content
        assert m.latest() == before


def test_new_file_closed_unwritten_fails_at_close_when_commits_fail(root, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        _refuse_commits(root)
        fd = os.open(m.path / "ns" / "fresh", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with pytest.raises(OSError) as err:
            os.close(fd)
        assert err.value.errno == errno.EIO
        assert Lakehouse.open(root).snapshot().object_kind("ns", "fresh") is None


def test_closing_a_dup_commits_nothing_until_the_last_descriptor(root, tmp_path) -> None:
    """The shell's `cmd > file` pattern: the emptied file is not committed while a dup of
    its descriptor is open; the write through the dup is the one commit."""
    with mounted(root, tmp_path / "mnt") as m:
        before = m.latest()
        fd = os.open(m.path / "ns" / "t", os.O_WRONLY | os.O_TRUNC)
        dup = os.dup(fd)
        os.close(fd)
        assert m.latest() == before  # no empty version
        os.write(dup, b'{"kind": "table", "definition": {"table_format": "HUDI"}}\n')
        os.close(dup)
        assert m.latest() == before + 1
        assert _format(root) == "HUDI"


def test_a_copy_inherited_by_a_child_commits_nothing_until_it_is_closed(root, tmp_path) -> None:
    """`Popen(stdout=f)` and the parent closes its copy first: the child's write is the
    one commit (no empty version in between)."""
    with mounted(root, tmp_path / "mnt") as m:
        before = m.latest()
        fd = os.open(m.path / "ns" / "t", os.O_WRONLY | os.O_TRUNC)
        doc = '{"kind": "table", "definition": {"table_format": "HUDI"}}'
        child = subprocess.Popen(
            [sys.executable, "-c", f"import sys, time; time.sleep(0.5); print({doc!r})"],
            stdout=fd,
        )
        os.close(fd)
        after_close = m.latest()
        assert child.wait(timeout=60) == 0
        assert after_close == before  # the child still held it
        assert m.latest() == before + 1
        assert _format(root) == "HUDI"


def test_shell_emptying_is_committed_when_the_shell_goes_on(root, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        before = m.latest()
        target = m.path / "ns" / "t"
        script = f": > '{target}'; cat '{target}'; echo done"
        result = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
        assert result.returncode == 0 and result.stdout.endswith("done\n"), result
        assert m.latest() == before + 1  # committed before `cat` ran, not later
        assert _format(root) == ""
