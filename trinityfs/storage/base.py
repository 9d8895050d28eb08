"""What every storage backend provides, and the listing entry type.

Backends take locations already validated and relative to the root, and raise the
store's own exceptions (``FileNotFoundError`` for a missing file); `Storage` counts
requests and maps errors to `trinityfs.errors`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Temporary files of an in-progress local write; `Storage.list` hides them by default.
TEMP_PREFIX = ".trinityfs-tmp-"
# Files `probe_conditional_writes` creates and deletes at the root.
PROBE_PREFIX = ".trinityfs-probe-"


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file of a listing.

    `location` is relative to the storage root; `mtime` is POSIX seconds (UTC), or
    None when the store does not report it.
    """

    location: str
    size: int
    mtime: float | None


class Backend(ABC):
    """One kind of store. Thread-safe; locations are relative to the root."""

    #: create_if_absent should be checked with a probe before it is trusted.
    needs_probe: bool = False
    #: threads worth using for a batch of writes (network stores gain, local disks lose)
    write_parallelism: int = 16
    #: commits write the latest-version hint every this many versions (requests cost
    #: on object stores; a local overwrite without fsync is cheap: every commit)
    hint_interval: int = 8
    #: an existence check costs no request worth counting (a local stat): a commit then
    #: also checks that the root it builds on is still there (trinityfs/txn/publish.py)
    cheap_exists: bool = False

    @abstractmethod
    def read(self, loc: str) -> bytes: ...

    def read_if_regular(self, loc: str) -> bytes | None:
        """`read`, but None when `loc` is there and is no regular file (a symbolic link,
        a directory, a FIFO): for the markers, whose readers decide what that means.
        Here: `read` (object stores hold only files; local disk overrides it)."""
        return self.read(loc)

    @abstractmethod
    def write(self, loc: str, data: bytes, durable: bool = True) -> None:
        """Overwrite atomically: readers see the old or the new content, never a part.

        `durable=False` may skip flushing to stable storage (for best-effort files).
        """

    def overwrite_advisory(self, loc: str, data: bytes) -> None:
        """Overwrite a small advisory file (the latest-version hint) as cheaply as the
        store allows, without flushing it. Its readers parse and check what they read
        (a hint only says where to start probing), so a store may let a racing reader
        see a mix of old and new bytes (local disk does: `LocalBackend`)."""
        self.write(loc, data, durable=False)

    def write_new(self, loc: str, data: bytes) -> None:
        """Write a file whose name is new and unique (nothing to overwrite)."""
        self.write(loc, data)

    def write_new_unsynced(self, loc: str, data: bytes) -> None:
        """Like `write_new`, but durable only after the next `sync` (for batches)."""
        self.write_new(loc, data)

    def sync(self, locs: Sequence[str]) -> None:  # noqa: B027 - most stores need nothing
        """Make the `write_new_unsynced` files `locs` durable (no-op where writes are)."""

    def start_sync(self, locs: Sequence[str]) -> Callable[[], None]:
        """Begin making `locs` durable; the returned function waits until they are (and
        raises what a flush raised). Stores whose writes are durable already: at once."""
        self.sync(locs)
        return _done

    @abstractmethod
    def create_if_absent(self, loc: str, data: bytes) -> bool:
        """Atomically create; False if it already existed. Never shows a partial file."""

    def create_if_absent_after(
        self, loc: str, data: bytes, first_durable: Callable[[], None]
    ) -> bool:
        """`create_if_absent` once `first_durable()` (which makes durable the files the
        new one references, raising if it cannot) returned. A store that can flush the
        new file's content beside it does so (local disk); the others call it first."""
        first_durable()
        return self.create_if_absent(loc, data)

    def create_noting_identity(
        self, loc: str, data: bytes, first_durable: Callable[[], None] | None = None
    ) -> tuple[bool, tuple[int, ...] | None]:
        """`create_if_absent` (after `first_durable()` when given), and what `identity`
        would answer about the file right after it was created, where the create learns
        it at no extra request (local disk: `LocalBackend`); None when it did not create
        the file or would need another request to know."""
        if first_durable is None:
            return self.create_if_absent(loc, data), None
        return self.create_if_absent_after(loc, data, first_durable), None

    @abstractmethod
    def exists(self, loc: str) -> bool: ...

    def identity(self, loc: str) -> tuple[int, ...] | None:
        """What tells the file at `loc` from another one created later at the same
        name (a lakehouse removed and created again in place), None when it is missing.

        Where that would cost a request more than `exists` (object stores: a HEAD for
        the ETag), this answers only whether the file exists: `()` for any file, so two
        answers compare equal and nothing is told apart (see `cheap_exists`).
        """
        return () if self.exists(loc) else None

    def mtime(self, loc: str) -> float | None:
        """The file's modification time (POSIX seconds; None where the store keeps
        none); FileNotFoundError when missing. Here: a listing of its directory (stores
        that can ask about one file override it)."""
        parent = loc.rpartition("/")[0]
        for page in self.list_dir_pages(parent):
            for entry in page:
                if entry.location == loc:
                    return entry.mtime
        raise FileNotFoundError(loc)

    placement_choices = 1  # candidate names worth drawing for a new file (txn/placement.py)

    def directories_to_make(self, loc: str, *, probe: bool = False) -> int:
        """How many directories writing `loc` would make (a placement hint; `probe`: one
        cheap check allowed): stores without directories make none."""
        return 0

    @abstractmethod
    def size(self, loc: str) -> int: ...

    @abstractmethod
    def delete(self, loc: str) -> None:
        """Delete; a missing file is not an error."""

    @abstractmethod
    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        """Files below directory `prefix` ("" = root), one page per storage request."""

    def list_dir_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        """Files right in directory `prefix` ("" = root), none of its subdirectories',
        one page per storage request. Here: `list_pages` with the deeper ones left out
        (a store that can list one level, a local directory, overrides it)."""
        depth = prefix.count("/") + 1 if prefix else 0
        for page in self.list_pages(prefix):
            yield [e for e in page if e.location.count("/") == depth]


def to_epoch(value: Any) -> float | None:
    """POSIX seconds from what fsspec backends put in `info` (float, datetime, ISO text)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _done() -> None:
    """A flush that already finished."""
