"""The one mapping of trinityfs errors to the OSError vocabulary of filesystems.

Every front end that speaks errno (this fsspec filesystem, the command, the FUSE mount)
uses `to_os_error` / `translate`, so a given failure always gets the same errno:

| trinityfs.errors                          | raised as                         | errno     |
|-------------------------------------------|-----------------------------------|-----------|
| NotFoundError (namespace, object, version, lakehouse, transaction) | FileNotFoundError | ENOENT |
| StorageFileNotFoundError (a file the tree points to is gone) | OSError           | EIO       |
| AlreadyExistsError                        | FileExistsError                   | EEXIST    |
| ReadOnlyError                             | PermissionError                   | EROFS     |
| InvalidNameError, InvalidArgumentError    | InvalidRequest (a ValueError)     | EINVAL    |
|   ... a name over its maximum length      | NameTooLong (OSError, ValueError) | ENAMETOOLONG |
|   ... an invalid name while only looking  | FileNotFoundError                 | ENOENT    |
| NamespaceNotEmptyError                    | OSError                           | ENOTEMPTY |
| CommitConflictError                       | CommitConflict (an OSError)       | EBUSY     |
| CommitRetriesExhaustedError (busy, not a conflict) | BlockingIOError          | EAGAIN    |
| TransactionClosedError                    | InvalidRequest (a ValueError)     | EINVAL    |
| TransactionExpiredError                   | TimeoutError                      | ETIMEDOUT |
| UnsupportedFormatVersionError, UnsupportedStorageError | OSError              | ENOTSUP   |
| CorruptFileError, TreeInvariantError, StorageError, any other | OSError       | EIO       |

The original exception is chained as `__cause__`. Structural impossibilities of the
two-level catalog (a directory below a namespace, a file at the top) are `EPERM`.
"""

from __future__ import annotations

import errno
from typing import Any

from trinityfs.catalog.model import LAKEHOUSE_DEF_KEY
from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    CorruptFileError,
    InvalidArgumentError,
    InvalidNameError,
    NamespaceNotEmptyError,
    NameTooLongError,
    NotFoundError,
    ReadOnlyError,
    StorageFileNotFoundError,
    TransactionClosedError,
    TransactionExpiredError,
    TreeInvariantError,
    TrinityError,
    UnsupportedFormatVersionError,
    UnsupportedStorageError,
)


class InvalidRequest(ValueError):
    """A bad name, definition or argument; carries errno EINVAL for errno-speaking callers."""

    errno = errno.EINVAL

    def __init__(self, message: str, filename: str | None = None):
        super().__init__(message)
        self.strerror = message
        self.filename = filename


class NameTooLong(OSError, ValueError):
    """A name over the lakehouse's maximum length: errno ENAMETOOLONG, what shells and tools
    say for a name over a file system's limit ("File name too long"); still a ValueError,
    as every refused name is."""


class CommitConflict(OSError):
    """A concurrent commit changed what this write depends on (errno EBUSY).

    `key` is the tree key, `object` a readable name of it (e.g. "table sales.orders"),
    `path` its path in the filesystem when known, `version` the winning version.
    """

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        object: str | None = None,
        path: str | None = None,
        version: int | None = None,
    ):
        super().__init__(errno.EBUSY, message, path)
        self.key = key
        self.object = object
        self.path = path
        self.version = version


def _os_error(cls: type[OSError], code: int, message: str, path: str | None) -> OSError:
    return cls(code, message, path) if path else cls(code, message)


def read_only(path: str, why: str = "") -> PermissionError:
    message = why or "old versions and exports are read-only (write to / or /v/latest)"
    return _os_error(PermissionError, errno.EROFS, message, path)  # type: ignore[return-value]


def not_permitted(path: str, why: str) -> PermissionError:
    return _os_error(PermissionError, errno.EPERM, why, path)  # type: ignore[return-value]


def not_found(path: str, why: str = "no such file or directory") -> FileNotFoundError:
    return _os_error(FileNotFoundError, errno.ENOENT, why, path)  # type: ignore[return-value]


def exists(path: str, why: str = "already exists") -> FileExistsError:
    return _os_error(FileExistsError, errno.EEXIST, why, path)  # type: ignore[return-value]


def is_a_directory(path: str, why: str = "is a directory") -> IsADirectoryError:
    return _os_error(IsADirectoryError, errno.EISDIR, why, path)  # type: ignore[return-value]


def not_a_directory(path: str, why: str = "not a directory") -> NotADirectoryError:
    return _os_error(NotADirectoryError, errno.ENOTDIR, why, path)  # type: ignore[return-value]


def not_empty(path: str, why: str) -> OSError:
    return _os_error(OSError, errno.ENOTEMPTY, why, path)


def namespace_not_movable_to(path: str, target_exists: bool) -> OSError:
    """A namespace moved (renamed) to `path`, a /<namespace>/<name> path: the one answer
    of trinity:// and the mount. Namespaces are one level, so a directory cannot be made
    there: EPERM, as `mkdir` of that path answers; onto an existing table or view it is
    ENOTDIR, as rename(2) and mv(1) answer for a directory onto a file."""
    if target_exists:
        return not_a_directory(path, "a namespace cannot replace a table or view")
    return not_permitted(path, "directories are namespaces, at the top level only")


def describe_key(key: str, keys: Any = None) -> tuple[str, tuple[str, str | None] | None]:
    """A readable name of a tree key ("table ns.t") and its (namespace, name), if decodable."""
    if keys is not None:
        try:
            decoded = keys.decode(key)
        except (TrinityError, ValueError):
            decoded = None
        if decoded is not None:
            full = (
                decoded.namespace if decoded.name is None else f"{decoded.namespace}.{decoded.name}"
            )
            return f"{decoded.kind} {full}", (decoded.namespace, decoded.name)
    if key == LAKEHOUSE_DEF_KEY:
        return "the lakehouse definition", None
    return f"key {key!r}", None


def to_os_error(
    exc: TrinityError,
    path: str | None = None,
    *,
    lookup: bool = False,
    keys: Any = None,
    path_of: Any = None,
) -> Exception:
    """The OSError (or ValueError) that stands for `exc` at a filesystem edge.

    `lookup`: the operation only looks something up, so an invalid name means "no such
    file" rather than "invalid argument". `keys` (a KeyCodec) and `path_of` (namespace,
    name -> path) let a commit conflict name the object and its path.
    """
    message = str(exc)
    if isinstance(exc, StorageFileNotFoundError):
        return _os_error(OSError, errno.EIO, f"{message} (the catalog points to it)", path)
    if isinstance(exc, NotFoundError):
        return _os_error(FileNotFoundError, errno.ENOENT, message, path)
    if isinstance(exc, AlreadyExistsError):
        return _os_error(FileExistsError, errno.EEXIST, message, path)
    if isinstance(exc, ReadOnlyError):
        return _os_error(PermissionError, errno.EROFS, message, path)
    if isinstance(exc, InvalidNameError) and lookup:
        return _os_error(FileNotFoundError, errno.ENOENT, message, path)
    if isinstance(exc, NameTooLongError):
        return (
            NameTooLong(errno.ENAMETOOLONG, message, path)
            if path
            else NameTooLong(errno.ENAMETOOLONG, message)
        )
    if isinstance(exc, InvalidNameError | InvalidArgumentError | TransactionClosedError):
        return InvalidRequest(f"{path}: {message}" if path else message, path)
    if isinstance(exc, NamespaceNotEmptyError):
        return _os_error(OSError, errno.ENOTEMPTY, message, path)
    if isinstance(exc, CommitConflictError):
        what, names = describe_key(exc.key, keys)
        where = None
        if names is not None and path_of is not None:
            where = path_of(*names)
        text = f"commit conflict on {what}" + (f" ({where})" if where else "")
        text += f": changed by version {exc.version}; nothing was committed, retry"
        return CommitConflict(text, key=exc.key, object=what, path=where, version=exc.version)
    if isinstance(exc, CommitRetriesExhaustedError):
        return OSError(errno.EAGAIN, f"{message}; nothing was committed, retry")
    if isinstance(exc, TransactionExpiredError):
        return _os_error(TimeoutError, errno.ETIMEDOUT, message, path)
    if isinstance(exc, UnsupportedFormatVersionError | UnsupportedStorageError):
        return _os_error(OSError, errno.ENOTSUP, message, path)
    if isinstance(exc, CorruptFileError | TreeInvariantError):
        return _os_error(OSError, errno.EIO, message, path)
    return _os_error(OSError, errno.EIO, message, path)


class translate:
    """Re-raise any TrinityError inside the block as its OSError (chained). A plain
    class: every read resolves a path inside one, and a generator-based context manager
    cost ~4 us more per use on a warm `cat`."""

    __slots__ = ("_kwargs", "_lookup", "_path")

    def __init__(self, path: str | None = None, *, lookup: bool = False, **kwargs: Any) -> None:
        self._path = path
        self._lookup = lookup
        self._kwargs = kwargs

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        if isinstance(exc, TrinityError):
            raise to_os_error(exc, self._path, lookup=self._lookup, **self._kwargs) from exc
        return False


def errno_of(exc: BaseException) -> int:
    """The errno a front end should report for an exception (EIO when it has none)."""
    code = getattr(exc, "errno", None)
    if isinstance(code, int):
        return code
    if isinstance(exc, ValueError):
        return errno.EINVAL
    return errno.EIO


def message_of(exc: BaseException) -> str:
    """One line describing an exception: "path: message" for OSErrors, else str(exc)."""
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
        if exc.filename and str(exc.filename) not in text:
            text = f"{exc.filename}: {text}"
        return " ".join(text.split())
    text = str(exc) or type(exc).__name__
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])
    return " ".join(text.split())


__all__ = [
    "CommitConflict",
    "InvalidRequest",
    "NameTooLong",
    "errno_of",
    "exists",
    "is_a_directory",
    "message_of",
    "namespace_not_movable_to",
    "not_a_directory",
    "not_empty",
    "not_found",
    "not_permitted",
    "read_only",
    "to_os_error",
    "translate",
]
