"""Backends over fsspec filesystems: any protocol (best effort) and memory://."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from trinityfs.errors import UnsupportedStorageError

from .base import Backend, FileEntry, to_epoch

_MTIME_KEYS = ("mtime", "LastModified", "last_modified", "updated", "modified", "created")


class FsspecBackend(Backend):
    """Files below `root` (an fsspec path, without protocol) of filesystem `fs`.

    create_if_absent is refused: fsspec gives no atomic create for an unknown store.
    """

    def __init__(self, fs: Any, root: str, url: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        self.url = url

    def _path(self, loc: str) -> str:
        return f"{self.root}/{loc}" if self.root else loc

    def read(self, loc: str) -> bytes:
        return self.fs.cat_file(self._path(loc))

    def write(self, loc: str, data: bytes, durable: bool = True) -> None:
        self.fs.pipe_file(self._path(loc), data)

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        raise UnsupportedStorageError(
            f"{self.url} ({type(self.fs).__name__}) offers no atomic create-if-absent; "
            "trinityfs can commit only to local disk, memory:// or S3-compatible stores "
            "with conditional writes (If-None-Match)"
        )

    def exists(self, loc: str) -> bool:
        try:
            info = self.fs.info(self._path(loc))
        except FileNotFoundError:
            return False
        return info.get("type") == "file"

    def mtime(self, loc: str) -> float | None:
        info = self.fs.info(self._path(loc))
        if info.get("type") != "file":
            raise FileNotFoundError(f"not a file: {loc}")
        return _mtime(info)

    def size(self, loc: str) -> int:
        info = self.fs.info(self._path(loc))
        if info.get("type") != "file":
            raise FileNotFoundError(f"not a file: {loc}")
        return int(info["size"])

    def delete(self, loc: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._path(loc))

    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        base = self._path(prefix) if prefix else self.root
        found = self.fs.find(base, detail=True)
        strip = self.fs._strip_protocol(base).rstrip("/") + "/"
        yield [
            FileEntry(
                name[len(strip) :] if not prefix else f"{prefix}/{name[len(strip) :]}",
                int(info.get("size") or 0),
                _mtime(info),
            )
            for name, info in found.items()
            if name.startswith(strip) and info.get("type", "file") == "file"
        ]


def _mtime(info: dict[str, Any]) -> float | None:
    for key in _MTIME_KEYS:
        if info.get(key) is not None:
            return to_epoch(info[key])
    return None


# fsspec's memory store is one dict per process; this lock makes check-then-create atomic.
_MEMORY_LOCK = threading.Lock()


class MemoryBackend(FsspecBackend):
    """memory:// (fsspec's process-wide MemoryFileSystem); writes swap in whole files."""

    write_parallelism = 1

    def _path(self, loc: str) -> str:
        # the form of the store's keys ("/root/loc")
        return self.fs._strip_protocol(super()._path(loc))

    def write(self, loc: str, data: bytes, durable: bool = True) -> None:
        with _MEMORY_LOCK:
            self.fs.pipe_file(self._path(loc), data)

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        path = self._path(loc)
        with _MEMORY_LOCK:
            if path in self.fs.store:
                return False
            self.fs.pipe_file(path, data)
            return True

    def exists(self, loc: str) -> bool:
        return self._path(loc) in self.fs.store

    def size(self, loc: str) -> int:
        try:
            return self.fs.store[self._path(loc)].size
        except KeyError:
            raise FileNotFoundError(loc) from None

    def delete(self, loc: str) -> None:
        with _MEMORY_LOCK:
            self.fs.store.pop(self._path(loc), None)
