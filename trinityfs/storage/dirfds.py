"""Directory descriptors of the local backend (trinityfs/storage/local.py).

`OPENAT2` resolves a whole location below a directory descriptor in one openat2(2)
call that refuses a symbolic link at any component and any step out of the directory
(Linux 5.6+; unavailable elsewhere: the backend then walks one component at a time).
`RootDir` is a backend's root directory, opened once.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import sys
import threading

from trinityfs.errors import LakehouseNotFoundError

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | CLOEXEC  # the root itself may be a link


class _OpenHow(ctypes.Structure):
    """struct open_how of openat2(2)."""

    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64))


_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE_SAFE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
# openat2 has number 437 on every architecture whose table has it (the common
# numbering of system calls added since Linux 5.1); elsewhere the walk is used.
_OPENAT2_MACHINES = {"x86_64", "amd64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x"}
# errors that mean "no openat2 here" (old kernel, seccomp filter, struct too new)
_OPENAT2_UNSUPPORTED = {errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG}


class OpenAt2:
    """openat2(2) through the C library's syscall(), or unavailable (`enabled` False).

    `open` returns a new descriptor, or -1 on any failure: callers then walk the path
    one component at a time, which gives the same result or the right error."""

    def __init__(self) -> None:
        self.enabled = False
        self._hows: dict[int, _OpenHow] = {}
        if not sys.platform.startswith("linux") or platform.machine().lower() not in (
            _OPENAT2_MACHINES
        ):
            return
        try:
            syscall = ctypes.CDLL(None, use_errno=True).syscall
        except (OSError, AttributeError):
            return
        syscall.restype = ctypes.c_long
        syscall.argtypes = (
            ctypes.c_long,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_size_t,
        )
        self._syscall = syscall
        self.enabled = True

    def open(self, dir_fd: int, path: str, flags: int) -> int:
        how = self._hows.get(flags)
        if how is None:  # at most a few flag sets: built once each, then only read
            how = self._hows.setdefault(flags, _OpenHow(flags, 0, _RESOLVE_SAFE))
        fd = self._syscall(437, dir_fd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how))
        if fd < 0 and ctypes.get_errno() in _OPENAT2_UNSUPPORTED:
            self.enabled = False  # never again in this process: the walk works everywhere
        return fd


OPENAT2 = OpenAt2()


class RootDir:
    """The descriptor of a backend's root directory, opened once and shared with its
    `child` backends (each operation used to open the root's path again).

    Before each use the descriptor is checked with one fstat. A descriptor number
    closed behind our back and reused by another file (then it is not ours to close) is
    replaced by opening the path again. A root directory that was opened once and has
    since been removed, or replaced by another directory (a lakehouse deleted and made
    again, a backup moved into place), is a LakehouseNotFoundError from then on: the
    layers above remember versions, trees and definitions of the lakehouse they opened,
    and answering or committing from that memory in another directory would serve a
    lakehouse that no longer exists or write a root into a different one (found
    2026-11-24: a warm writer committed version 7 into a freshly made lakehouse of 2
    versions, which no reader could open after that). A replaced descriptor of ours is
    closed only after a few more replacements (another thread may still be using it),
    the others with the backend (`close`, or when it is garbage collected). Following a
    root that is *renamed* (not removed) is what an open file does too: operations go on
    in the directory that was opened.
    """

    _KEEP_RETIRED = 4

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self._identity: tuple[int, int] = (0, 0)
        self._retired: list[int] = []
        self._lock = threading.Lock()

    def fd(self) -> int:
        """The open root descriptor. FileNotFoundError when the root was never opened and
        does not exist; LakehouseNotFoundError when it was opened and is gone or is
        another directory now."""
        fd = self._fd
        if fd >= 0:  # still our root: same directory, not removed (kept flat: every
            try:  # operation, a warm reader's probe among them, runs this)
                st = os.fstat(fd)
            except OSError:
                pass
            else:
                dev, ino = self._identity
                if st.st_ino == ino and st.st_dev == dev and st.st_nlink > 0:
                    return fd
        with self._lock:
            if self._fd == fd:  # no other thread replaced it meanwhile
                if fd >= 0:
                    self._retire(fd)
                try:
                    new = os.open(self.path, _ROOT_FLAGS)
                except FileNotFoundError:
                    if self.was_opened():
                        raise self._gone("was removed") from None
                    raise
                except NotADirectoryError:  # said once here, for every front end
                    why = "it is" if os.path.isfile(self.path) else "its path holds"
                    raise LakehouseNotFoundError(
                        f"no lakehouse at {self.path}: {why} a file, not a directory"
                    ) from None
                try:
                    st = os.fstat(new)
                    if self.was_opened() and (st.st_dev, st.st_ino) != self._identity:
                        raise self._gone("was replaced by another directory")
                except BaseException:
                    os.close(new)
                    raise
                self._identity = (st.st_dev, st.st_ino)
                self._fd = new
            return self._fd

    def _gone(self, what: str) -> LakehouseNotFoundError:
        return LakehouseNotFoundError(
            f"the lakehouse root {self.path} {what} while open: nothing remembered of "
            "the lakehouse that was there is used (open the lakehouse again)"
        )

    def was_opened(self) -> bool:
        """Whether this root was open once (then a missing path means it was removed)."""
        return self._identity != (0, 0)

    def _retire(self, fd: int) -> None:
        """Stop using `fd`: keep it open a while if it is still our directory (removed)."""
        self._fd = -1
        try:
            st = os.fstat(fd)
        except OSError:
            return  # closed behind our back: the number is not ours
        if (st.st_dev, st.st_ino) != self._identity:
            return  # reused by another file: not ours to close
        self._retired.append(fd)
        while len(self._retired) > self._KEEP_RETIRED:
            os.close(self._retired.pop(0))

    def close(self) -> None:
        """Close every descriptor (the next operation opens the root again)."""
        with self._lock:
            fds = [self._fd, *self._retired] if self._fd >= 0 else list(self._retired)
            self._fd = -1
            self._retired = []
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
