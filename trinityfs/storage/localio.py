"""File writing helpers of the local backend (`trinityfs.storage.local`): the fsync
threads, the write-out hint, the in-place overwrite of the hint, whole writes and quiet
unlinks. Plain functions of descriptors; no path is ever resolved here."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .dirfds import CLOEXEC

_CLOEXEC = CLOEXEC

# this process's pool of `_flusher` threads, under the key "pool"; a forked child starts
# without it (it has none of its parent's threads): no getpid per commit to tell
_flushers: dict[str, ThreadPoolExecutor] = {}
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_flushers.clear)


def _flusher() -> ThreadPoolExecutor:
    """Threads that run fsyncs for `start_sync` (fsync releases the GIL); one pool per
    process (a forked child makes its own)."""
    pool = _flushers.get("pool")
    if pool is None:
        pool = _flushers.setdefault(
            "pool", ThreadPoolExecutor(max_workers=8, thread_name_prefix="trinityfs-fsync")
        )
    return pool


def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    """Linux's sync_file_range(2) from the C library, or None where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


_SYNC_FILE_RANGE = _sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def _start_writeback(fd: int) -> None:
    """Start writing the file's dirty pages out, without waiting (a hint, never a
    durability promise: the fsync that follows is what makes the file durable).

    ext4 allocates a new file's blocks when its pages are written out; started here,
    the allocations of every file of a commit join the journal transaction that the
    first of its fsyncs commits, so the others find their changes committed instead of
    each waiting for another journal commit."""
    if _SYNC_FILE_RANGE is not None:
        _SYNC_FILE_RANGE(fd, 0, 0, _SYNC_FILE_RANGE_WRITE)  # a failure only loses the hint


def _fsync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _flushed() -> None:
    """A flush that already finished."""


def _overwrite_in_place(dir_fd: int, name: str, data: bytes) -> bool:
    """Write `data` over the file `name` of `dir_fd` (made if missing) under an
    exclusive flock, cut to its length when it was longer; False (nothing written)
    when that is not a regular file with no other hard link."""
    try:
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC,
            0o666,
            dir_fd=dir_fd,
        )
    except OSError as e:
        # a symbolic link (never followed), a FIFO, a directory: replaced by the caller
        if e.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # writers one at a time; then the size is ours
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False  # writing it would change something else
        if st.st_size > len(data):
            os.ftruncate(fd, len(data))
        view = memoryview(data)
        while view:
            view = view[os.pwrite(fd, view, len(data) - len(view)) :]
        return True
    finally:
        os.close(fd)  # releases the lock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink_quietly(dir_fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)
