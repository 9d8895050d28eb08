"""Pieces shared by the FUSE operations modules: constants, handles, the resolved view
of a path (a `Place` of the shared path model plus what the mount tracks), and the one
errno mapping of every operation (`_fuse_op`)."""

from __future__ import annotations

import errno
import functools
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from trinityfs.catalog import CatalogSnapshot, Selection
from trinityfs.catalog.paths import Place
from trinityfs.errors import TrinityError
from trinityfs.fs.errors import errno_of, message_of, to_os_error
from trinityfs.fs.paths import PathNameError, TrinityPath, encode_name, parse_path
from trinityfs.fuse.scratch import ScratchFile

log = logging.getLogger("trinityfs.fuse")

MAX_FILE_BYTES = 64 * 1024 * 1024  # a definition is small; refuse runaway writes (EFBIG)
XATTR_PREFIX = "user."
XATTR_CREATE, XATTR_REPLACE = 1, 2
ENOATTR = getattr(errno, "ENOATTR", errno.ENODATA)
BLOCK = 4096
MILLIS_NS = 1_000_000


def _os_error(code: int, message: str, path: str | None = None) -> OSError:
    return OSError(code, message, path) if path else OSError(code, message)


@dataclass
class _View:
    """A resolved path: the version it shows and what may be done there."""

    tp: TrinityPath
    snapshot: CatalogSnapshot | None  # None for the versions directory /v
    writable: bool = False  # the latest version of a read-write mount
    history: bool = True  # a version of this lakehouse (not an export)
    fresh: bool = False  # the snapshot was probed for this call
    selection: Selection | None = None  # how /v/<selector> resolved (None: latest, pin)

    @property
    def key(self) -> tuple[str, str]:
        return (self.tp.namespace or "", self.tp.name or "")

    @property
    def place(self) -> Place:
        """This path in the shared path model."""
        return self.place_of(self.tp.namespace, self.tp.name)

    def place_of(self, namespace: str | None, name: str | None = None) -> Place:
        """A namespace or object of this view's version in the shared path model."""
        snap = self.snapshot
        assert snap is not None
        return Place(snap, snap.version, self.writable, self.selection, namespace, name)

    @staticmethod
    def at(snapshot: CatalogSnapshot) -> _View:
        """A view of a snapshot's version root (for lookups by name)."""
        return _View(_ROOT, snapshot)


_ROOT = parse_path("/")


@dataclass
class _ReadHandle:
    data: bytes
    version: int | None
    # a table or view of the latest version: recorded as served to the process that
    # reads it, at its first read (served.py), not at open (an open that reads nothing
    # shows nothing)
    key: tuple[str, str] | None = None
    location: str | None = None


@dataclass
class _WriteHandle:
    """A table or view open for writing: bytes in memory, committed at flush."""

    namespace: str
    name: str
    base: int  # the version the file was opened at (the commit builds on it)
    data: bytearray
    new: bool  # the object did not exist when opened
    changed: bool = False  # written, truncated or touched since the last commit
    # emptied by O_TRUNC at open: committed at the last flush if nothing else happens (a
    # shell's `> file` closes a dup of the descriptor before writing: that flush must not
    # commit), else at release
    truncated: bool = False
    committed: bool = False
    failed: bool = False  # the last commit attempt was refused (EINVAL/EBUSY)
    orphaned: bool = False  # unlinked or replaced while open: commits nothing
    append: bool = False
    version: int | None = None  # the last version this handle committed
    streaming: bool = True  # every write so far went to the end: checked as it comes
    rejected: str | None = None  # why a write was refused: the handle commits nothing
    # the object changed since it was served to the writing process (served.py): a
    # commit from this handle would overwrite that change unseen (EBUSY at close)
    stale: str | None = None
    process: Hashable | None = None  # the process that opened it (served.py), if known
    # opened O_RDWR on this definition location: a read through the handle before any
    # write shows it (served.py; clears `stale`)
    readable_location: str | None = None
    # (atime, mtime) set by utimens while open (`cp -p`): shown after its commit (times.py)
    set_times: tuple[int, int] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


@dataclass
class _ScratchHandle:
    file: ScratchFile
    append: bool = False


@dataclass
class _Overlay:
    """Changes of the latest version that live in this mount only (see scratch.py)."""

    scratch: dict[tuple[str, str], ScratchFile] = field(default_factory=dict)
    hidden: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # -> scratch


def _path_of(namespace: str, name: str | None) -> str:
    head = f"/{encode_name(namespace)}"
    return head if name is None else f"{head}/{encode_name(name)}"


def _fuse_op(lookup: bool = False) -> Callable:
    """Run a FUSE operation; map every error to an OSError with the errno tools expect."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(self: Any, path: str | None, *args: Any) -> Any:
            try:
                return fn(self, path, *args)
            except OSError as exc:
                if not isinstance(exc.errno, int) or exc.errno <= 0:
                    log.error("%s %s: %s", fn.__name__, path, exc)
                    raise _os_error(errno.EIO, str(exc), path) from exc
                raise
            except TrinityError as exc:
                mapped = to_os_error(exc, path, lookup=lookup, keys=self._keys(), path_of=_path_of)
                code = errno_of(mapped)
                if code == errno.EBUSY:
                    log.warning("%s %s: %s", fn.__name__, path, message_of(mapped))
                elif code == errno.EIO:
                    log.error("%s %s: %s", fn.__name__, path, message_of(mapped))
                raise _os_error(code, message_of(mapped), path) from exc
            except PathNameError as exc:  # a spelling that is no name's (fs/paths.py)
                code = errno.ENOENT if lookup else errno.EINVAL
                raise _os_error(code, str(exc), path) from exc
            except ValueError as exc:  # ContentError, InvalidRequest
                log.warning("%s %s: %s", fn.__name__, path, message_of(exc))
                raise _os_error(errno.EINVAL, message_of(exc), path) from exc
            except Exception as exc:
                log.exception("%s %s failed", fn.__name__, path)
                raise _os_error(errno.EIO, str(exc), path) from exc

        return wrapper

    return decorate
