"""trinityfs/fuse/descriptors.py: whether a descriptor of a mounted file is still open
elsewhere when one is closed (no mount needed: any file will do)."""

from __future__ import annotations

import os
import subprocess
import sys

from trinityfs.fuse import descriptors
from trinityfs.fuse.descriptors import holds_another


def test_a_dup_in_the_closing_process_is_found(tmp_path) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert holds_another(os.getpid(), str(path))
    finally:
        os.close(fd)
    assert not holds_another(os.getpid(), str(path))


def test_a_copy_in_a_child_is_found(tmp_path) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    with open(path) as f:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdin=f)
    try:
        assert holds_another(os.getpid(), str(path))
    finally:
        child.kill()
        child.wait()
    assert not holds_another(os.getpid(), str(path))


def test_a_closing_process_that_cannot_be_seen_leaves_it_to_the_release(
    tmp_path, monkeypatch
) -> None:
    """Another user's process (allow_other): its table is unreadable, so it may hold a
    dup; the flush must not commit (an empty version before its write)."""
    real = os.listdir

    def listdir(path: str):
        if path == f"/proc/{os.getpid()}/fd":
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(descriptors.os, "listdir", listdir)
    assert holds_another(os.getpid(), str(tmp_path / "f"))
    assert holds_another(0, str(tmp_path / "f"))  # another pid namespace
