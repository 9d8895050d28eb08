"""Issue 11 item 5: through the mount, `echo garbage > $M/ns/t` and `echo '{}' >> $M/ns/t`
returned 0 and the write was silently dropped (a WARNING in the mount log only); with
`-o allow_other` and no `default_permissions` any local user could change the catalog;
chmod was accepted and ignored; a non-empty mount point failed with "libfuse status 1".
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys

import pytest

from tests.regression.fuse_mount import FUSE, mounted, one_table

pytestmark = FUSE

DEFINITION = {"table_format": "ICEBERG", "properties": {"owner": "ops"}}


@pytest.fixture
def root(tmp_path) -> str:
    return one_table(str(tmp_path / "lake"), DEFINITION)


def _sh(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)


def test_shell_redirection_of_garbage_fails_and_commits_nothing(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        before = m.latest()
        content = (m.path / "ns" / "t").read_bytes()
        target = m.path / "ns" / "t"
        for script in (
            f"echo garbage > '{target}'",
            f"echo '{{}}' >> '{target}'",
            f"printf '[1]' > '{target}'",
            f"echo garbage > '{m.path}/ns/new'",
        ):
            result = _sh(script)
            assert result.returncode != 0, script
            assert "Invalid argument" in result.stderr, result.stderr
        assert m.latest() == before
        assert target.read_bytes() == content
        assert not (m.path / "ns" / "new").exists() or m.latest() == before


def test_close_of_an_incomplete_definition_fails_with_einval(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        before = m.latest()
        fd = os.open(m.path / "ns" / "t", os.O_WRONLY | os.O_TRUNC)
        os.write(fd, b'{"kind": "table", "definition": {')  # a valid prefix, never finished
        with pytest.raises(OSError) as caught:
            os.close(fd)
        assert caught.value.errno == errno.EINVAL
        assert m.latest() == before
        assert b'"owner": "ops"' in (m.path / "ns" / "t").read_bytes()


def test_chmod_is_refused_not_ignored(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        target = m.path / "ns" / "t"
        mode = stat.S_IMODE(target.stat().st_mode)
        os.chmod(target, mode)  # asking for what is there is fine
        with pytest.raises(PermissionError):
            os.chmod(target, 0o600)
        assert stat.S_IMODE(target.stat().st_mode) == mode
        with pytest.raises(PermissionError):
            os.chown(target, 12345, -1)


def _mount_cli(root: str, mountpoint, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trinityfs.fuse", root, str(mountpoint), "--foreground", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )


def test_allow_other_without_default_permissions_is_refused(root: str, tmp_path) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    result = _mount_cli(root, mnt, "-o", "allow_other")
    assert result.returncode != 0
    assert "default_permissions" in result.stderr
    assert not os.path.ismount(mnt)


def test_non_empty_mount_point_gets_a_clear_message(root: str, tmp_path) -> None:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    (mnt / "thesis.txt").write_text("mine")
    result = _mount_cli(root, mnt)
    assert result.returncode != 0
    assert "not empty" in result.stderr and "libfuse status" not in result.stderr
    with mounted(root, mnt, "-o", "nonempty") as m:  # explicitly asked for: allowed
        assert (m.path / "ns" / "t").exists()
    assert (mnt / "thesis.txt").read_text() == "mine"
