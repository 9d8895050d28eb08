"""File objects of the trinity:// filesystem: a definition read whole, or written on close."""

from __future__ import annotations

import io
import sys
from typing import Any


class TrinityReadFile(io.BytesIO):
    """A table or view definition, read once when opened ("rb")."""

    def __init__(self, fs: Any, path: str, data: bytes, details: dict[str, Any] | None = None):
        super().__init__(data)
        self.fs = fs
        self.path = path
        self.mode = "rb"
        self.size = len(data)
        self.details = details or {}

    def writable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        raise io.UnsupportedOperation(f"{self.path} is open for reading")

    def writelines(self, lines: Any) -> None:
        raise io.UnsupportedOperation(f"{self.path} is open for reading")

    def truncate(self, size: int | None = None) -> int:
        raise io.UnsupportedOperation(f"{self.path} is open for reading")

    def __repr__(self) -> str:
        return f"<TrinityReadFile {self.path!r}>"


def _exception_in_flight() -> BaseException | None:
    """The exception this thread is handling right now (None outside any handler)."""
    return sys.exc_info()[1]


class TrinityWriteFile(io.BytesIO):
    """Bytes written to a table or view ("wb", "xb"), committed when the file is closed.

    Only a clean close commits. A close that happens while an exception raised after the
    file was opened is propagating writes nothing: leaving `with fs.open(...)` (or
    `with fsspec.open(...)`, whose OpenFile closes its files without being told about the
    exception) by an exception, or `close()` in a `finally` of a failing block. Inside
    `fs.transaction` (autocommit False) closing adds the change to the transaction.
    """

    def __init__(self, fs: Any, path: str, mode: str, autocommit: bool = True):
        super().__init__()
        self.fs = fs
        self.path = path
        self.mode = mode
        self.autocommit = autocommit
        self.discarded = False
        self.version: int | None = None  # the version committed on close, if any
        # an exception already being handled when the file was opened is not a failure
        # of the writing code (e.g. a file written inside an `except` block)
        self._handling_at_open = _exception_in_flight()

    def readable(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> bytes:
        raise io.UnsupportedOperation(f"{self.path} is open for writing")

    def close(self) -> None:
        if self.closed:
            return
        failing = _exception_in_flight()
        if failing is not None and failing is not self._handling_at_open:
            self.discard()  # closed because the block that wrote raised: write nothing
            return
        data = self.getvalue()
        super().close()
        if not self.discarded:
            write_mode = "create" if "x" in self.mode else "overwrite"
            self.version = self.fs._write_object(self.path, data, mode=write_mode)

    def commit(self) -> None:
        """Apply the bytes now (fsspec transactions call this for files left open)."""
        self.close()

    def discard(self) -> None:
        """Drop the bytes: nothing is written."""
        self.discarded = True
        super().close()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()
        else:
            self.close()

    def __del__(self) -> None:
        # never commit from the garbage collector: an unclosed file writes nothing
        self.discarded = True

    def __repr__(self) -> str:
        return f"<TrinityWriteFile {self.path!r} mode={self.mode!r}>"


class TrinityTextWriter(io.TextIOWrapper):
    """Text mode over a `TrinityWriteFile`: leaving `with` by an exception writes nothing."""

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            discard = getattr(self.buffer, "discard", None)
            if discard is not None:
                discard()
        super().__exit__(exc_type, exc, tb)


__all__ = ["TrinityReadFile", "TrinityTextWriter", "TrinityWriteFile"]
