"""An overwrite (the markers, the hint replaced by rename) whose temporary file is removed
before its rename - by a sweep of leftover temporary files running with a clock far
ahead, as three overlapping expirations do in
tests/regression/test_overlapping_expirations_leave_marker_below_deleted_roots.py, which
failed now and then with FileNotFoundError from os.replace - writes a new temporary file
and renames that; a file that keeps vanishing still fails after a few attempts."""

from __future__ import annotations

import os

import pytest

import trinityfs.storage.local as local_module
from trinityfs.storage.local import LocalBackend


def _sweeping(backend: LocalBackend, times: int) -> list[str]:
    """The next `times` temporary files are removed right after they are written."""
    real = backend._write_temp
    swept: list[str] = []

    def written_then_swept(dir_fd: int, data: bytes, durable: bool = True) -> str:
        tmp = real(dir_fd, data, durable)
        if len(swept) < times:
            os.unlink(tmp, dir_fd=dir_fd)
            swept.append(tmp)
        return tmp

    backend._write_temp = written_then_swept  # type: ignore[method-assign]
    return swept


def test_a_temporary_file_swept_before_its_rename_is_written_again(tmp_path) -> None:
    backend = LocalBackend(str(tmp_path), fsync=False)
    backend.write("_oldest_version.txt", b"3")
    swept = _sweeping(backend, 1)
    backend.write("_oldest_version.txt", b"7")
    assert len(swept) == 1
    assert (tmp_path / "_oldest_version.txt").read_bytes() == b"7"
    assert sorted(os.listdir(tmp_path)) == ["_oldest_version.txt"]  # no temporary left


def test_a_temporary_file_that_keeps_vanishing_fails_the_write(tmp_path) -> None:
    backend = LocalBackend(str(tmp_path), fsync=False)
    backend.write("_oldest_version.txt", b"3")
    swept = _sweeping(backend, 100)
    with pytest.raises(FileNotFoundError):
        backend.write("_oldest_version.txt", b"7")
    assert len(swept) == local_module.WRITE_TEMP_ATTEMPTS
    assert (tmp_path / "_oldest_version.txt").read_bytes() == b"3"  # unchanged
