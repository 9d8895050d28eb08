"""Typed exceptions of trinityfs: the one module every layer raises from.

Front ends map these once to their own vocabulary (OSError/errno at the filesystem edge,
one line and an exit status in the CLI).
"""

from __future__ import annotations


class TrinityError(Exception):
    """Base of every error trinityfs raises on purpose."""


class NotFoundError(TrinityError, LookupError):
    """Something named does not exist."""


class NamespaceNotFoundError(NotFoundError):
    """The namespace does not exist (at the version being read)."""


class ObjectNotFoundError(NotFoundError):
    """The table or view does not exist (at the version being read)."""


class VersionNotFoundError(NotFoundError):
    """The version (or export, or time) names no readable root node."""


class TransactionNotFoundError(NotFoundError):
    """No distributed transaction has that id."""


class StorageFileNotFoundError(NotFoundError):
    """A file the format points to is missing from storage."""

    def __init__(self, path: str, message: str | None = None):
        super().__init__(message or f"file not found: {path}")
        self.path = path


class AlreadyExistsError(TrinityError):
    """The namespace, table or view (or export) already exists."""


class InvalidNameError(TrinityError, ValueError):
    """A name breaks a naming rule; the message names the rule."""


class NameTooLongError(InvalidNameError):
    """A name longer than its maximum (bytes of UTF-8): ENAMETOOLONG at errno front ends."""


class InvalidArgumentError(TrinityError, ValueError):
    """A definition, option or argument is not acceptable; the message says why."""


class JsonTooDeepError(InvalidArgumentError):
    """JSON nests arrays and objects deeper than the reader accepts (jsontext.loads)."""

    def __init__(self, limit: int):
        super().__init__(f"JSON nested too deeply (more than {limit} levels)")
        self.limit = limit


class LocationNotAllowedError(InvalidArgumentError):
    """A table, metadata or data location lies outside the lakehouse's allowed locations
    (its warehouse, plus any configured allow-list); nothing was read, written or deleted
    there. The message names the location, never the content of a file."""

    def __init__(self, location: str, message: str):
        super().__init__(message)
        self.location = location


class ReclaimRefusedError(TrinityError):
    """Reclaiming table files was refused: what kept versions reference is not known."""


class DefinitionLimitError(InvalidArgumentError):
    """A definition is nested deeper or is larger than every reader can read."""


class NamespaceNotEmptyError(TrinityError):
    """A namespace dropped with restrict still holds tables or views."""


class ReadOnlyError(TrinityError):
    """A write was attempted on a read-only version, export or snapshot."""


class CommitConflictError(TrinityError):
    """A concurrent commit changed what this transaction depends on."""

    def __init__(self, key: str, version: int, message: str | None = None):
        super().__init__(message or f"commit conflict on key {key!r}: changed by version {version}")
        self.key = key
        self.version = version


class CommitRetriesExhaustedError(TrinityError):
    """The commit lost the race to other writers more often than the retry bound."""


class TransactionClosedError(TrinityError):
    """The transaction was already committed or aborted."""


class TransactionExpiredError(TrinityError):
    """A distributed transaction is past its expire_at_millis."""


class CorruptFileError(TrinityError):
    """A format file is truncated, malformed or inconsistent; names the file and, once a
    layer that knows it has seen the error, the version being read."""

    def __init__(self, path: str, problem: str, version: int | None = None):
        super().__init__(path, problem)
        self.path = path
        self.problem = problem
        self.version = version

    def with_version(self, version: int | None) -> CorruptFileError:
        """Record the version being read (the first layer that knows it wins); returns self."""
        if self.version is None and version is not None:
            self.version = version
        return self

    def __str__(self) -> str:
        where = "" if self.version is None else f" (reading version {self.version})"
        return f"corrupt file {self.path}{where}: {self.problem}"


class UnsafeLocationError(CorruptFileError):
    """A stored location would escape the lakehouse root (absolute, '..', a scheme)."""


class LakehouseDefInvalidError(CorruptFileError):
    """The latest lakehouse definition fails validation (another writer committed it)
    and the repair asked for (a rollback, trinityfs/lifecycle/defrepair.py) is impossible."""


class UnsupportedFormatVersionError(TrinityError):
    """The lakehouse uses a major format version this implementation does not know."""


class StorageError(TrinityError):
    """The storage failed in a way that is not one of the cases above."""


class SymlinkInRootError(StorageError):
    """A path inside the lakehouse root is a symbolic link; trinityfs never follows one."""


class AmbiguousWriteError(StorageError):
    """A write may or may not have landed (timeout, 5xx, racing 409): read back to settle."""


class UnsupportedStorageError(StorageError):
    """The store cannot give the guarantees the format needs (atomic create-if-absent)."""


class LakehouseNotFoundError(NotFoundError):
    """No lakehouse exists at the root location."""


class TreeInvariantError(TrinityError):
    """A tree breaks an invariant of the format; lists every problem found."""

    def __init__(self, problems: list[str]):
        shown = "; ".join(problems[:10]) + (
            f"; ... ({len(problems)} in all)" if len(problems) > 10 else ""
        )
        super().__init__(f"tree check failed: {shown}")
        self.problems = problems


class ObjectChangedError(CommitConflictError):
    """A put with a base version found the object changed since that version."""

    def __init__(self, key: str, version: int, message: str, base_version: int):
        super().__init__(key, version, message)
        self.base_version = base_version


class ContentError(InvalidArgumentError):
    """Bytes written as a definition file are not one; the message says why."""

    errno = 22  # EINVAL, for front ends that turn errors into errno values
