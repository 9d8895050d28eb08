"""`with fs.transaction:` on the trinity:// filesystem: one catalog commit for everything.

fsspec's own transaction only defers the files opened inside it. Ours routes every change
made through the filesystem inside the block (closed files, `pipe`, `rm`, `mv`, `cp`,
`mkdir`, `rmdir`, namespace properties) into one `CatalogTransaction`, and reads of the
latest version inside the block see those changes. Leaving the block commits them as
one new version; an exception discards all of them. A commit that loses to a
concurrent change of a key it depends on raises `CommitConflict` (an OSError, EBUSY)
naming the object and its path, with nothing committed.

The catalog transaction begins at the first operation inside the block, so it reads the
latest version as of that moment. Blocks nest: only the outermost one commits, and an
exception that escapes an inner block dooms the whole transaction, and so does a call
that fails after part of it was applied (`put` or `pipe` of several files): leaving the
block then raises and commits nothing, rather than land half of a call that raised.
"""

from __future__ import annotations

import contextlib
from collections import deque
from typing import TYPE_CHECKING, Any

from trinityfs.errors import TrinityError
from trinityfs.fs.errors import InvalidRequest

if TYPE_CHECKING:
    from trinityfs.catalog import CatalogTransaction


class TrinityTransaction:
    """The `transaction_type` of `TrinityFileSystem` (see the module docstring)."""

    def __init__(self, fs: Any, **kwargs: Any):
        self.fs = fs
        self.files: deque = deque()  # fsspec's open() defers written files here
        self.catalog: CatalogTransaction | None = None
        self.depth = 0
        self.doomed = False
        self.doomed_by: str | None = None  # why, when a failed call left part of itself
        self.version: int | None = None  # committed by the block (None: nothing changed)

    # -- the context manager ---------------------------------------------------------

    def __enter__(self) -> TrinityTransaction:
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.complete(commit=exc_type is None)

    def start(self) -> None:
        self.depth += 1
        self.fs._intrans = True
        self.fs._transaction = self

    # -- used by the filesystem ------------------------------------------------------

    def begin(self) -> CatalogTransaction:
        """The catalog transaction of this block (begun at the first operation)."""
        if self.catalog is None:
            self.catalog = self.fs._begin_catalog_transaction()
        return self.catalog

    def doom(self, why: str) -> None:
        """Commit nothing at the end of the block: leaving it raises, naming `why`."""
        self.doomed = True
        self.doomed_by = self.doomed_by or why

    def complete(self, commit: bool = True) -> None:
        """Commit (or discard) everything done in the block; ends the transaction."""
        if self.depth > 1:  # an inner block: the outermost one decides
            self.depth -= 1
            self.doomed = self.doomed or not commit
            return
        fs = self.fs
        try:
            if commit and self.doomed:
                commit = False
                self._discard()
                why = self.doomed_by or "an exception escaped a nested transaction block"
                raise InvalidRequest(
                    f"{why}; the whole transaction was discarded and nothing was committed"
                )
            if commit:
                while self.files:
                    self.files.popleft().commit()  # applies a still-open file
                if self.catalog is not None:
                    self.version = fs._commit_catalog_transaction(self.catalog)
            else:
                self._discard()
        except BaseException:
            self._discard()
            raise
        finally:
            self.files.clear()
            self.catalog = None
            self.depth = 0
            self.doomed = False
            self.doomed_by = None
            if fs is not None:
                fs._intrans = False
                if fs._transaction is self:
                    fs._transaction = None
                fs._invalidate_latest()

    def _discard(self) -> None:
        while self.files:
            with contextlib.suppress(Exception):
                self.files.popleft().discard()
        if self.catalog is not None:
            with contextlib.suppress(TrinityError):
                self.catalog.abort()
            self.catalog = None


__all__ = ["TrinityTransaction"]
