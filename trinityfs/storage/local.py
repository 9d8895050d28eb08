"""Local-disk backend: atomic renames and hard links on a POSIX filesystem."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
import uuid
from collections.abc import Iterator, Sequence

from trinityfs.errors import UnsupportedStorageError

from .base import TEMP_PREFIX, Backend, FileEntry

# os.link failing with these means the filesystem has no hard links.
_NO_LINK_ERRNOS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS}


# Above this many files a batch is made durable by one sync() instead of an fsync each.
SYNC_EACH_MAX_FILES = 64


class LocalBackend(Backend):
    """Files under a local directory.

    Every write goes to a temporary file in the target directory, is fsynced, then
    renamed (overwrite) or hard-linked (create-if-absent) into place, so a reader never
    sees a partial file. `fsync=False` skips the fsyncs (faster, not crash-safe).
    """

    write_parallelism = 1  # threads only contend for the GIL and directory locks here

    def __init__(self, root: str, *, fsync: bool = True) -> None:
        self.root = os.path.abspath(root)
        self.fsync = fsync
        self._lock = threading.Lock()
        self._unsynced_dirs: set[str] = set()  # parents of directories made unsynced

    def _path(self, loc: str) -> str:
        return os.path.join(self.root, *loc.split("/"))

    def read(self, loc: str) -> bytes:
        try:
            with open(self._path(loc), "rb") as f:
                return f.read()
        except NotADirectoryError as e:
            raise FileNotFoundError(str(e)) from e

    def write(self, loc: str, data: bytes, durable: bool = True) -> None:
        path = self._path(loc)
        tmp = self._write_temp(os.path.dirname(path), data, durable)
        try:
            os.replace(tmp, path)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        if durable:
            self._fsync_dir(os.path.dirname(path))

    def write_new_unsynced(self, loc: str, data: bytes) -> None:
        # A new unique name is referenced by no root until the batch is synced and the
        # commit's root created, so it may be written in place and synced once for all.
        path = self._path(loc)
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            self._make_dirs_unsynced(directory)
        with open(path, "wb") as f:
            f.write(data)

    def _make_dirs_unsynced(self, directory: str) -> None:
        """Create missing directories; their entries become durable at the next sync."""
        missing = []
        while not os.path.isdir(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for new in reversed(missing):
            try:
                os.mkdir(new)
            except FileExistsError:
                continue
            with self._lock:
                self._unsynced_dirs.add(os.path.dirname(new))

    def sync(self, locs: Sequence[str]) -> None:
        if not self.fsync:
            return
        with self._lock:
            new_dirs = set(self._unsynced_dirs)
        if len(locs) + len(new_dirs) > SYNC_EACH_MAX_FILES:
            os.sync()  # one flush of file data and directory entries for a whole batch
        else:
            for directory in new_dirs | {os.path.dirname(self._path(loc)) for loc in locs}:
                self._fsync_dir(directory)
            for loc in locs:
                fd = os.open(self._path(loc), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        with self._lock:
            self._unsynced_dirs -= new_dirs

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        path = self._path(loc)
        directory = os.path.dirname(path)
        tmp = self._write_temp(directory, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError as e:
            if e.errno in _NO_LINK_ERRNOS:
                raise UnsupportedStorageError(
                    f"cannot create {loc!r} atomically: the filesystem under {self.root} "
                    f"does not support hard links ({e.strerror})"
                ) from e
            raise
        finally:
            _unlink_quietly(tmp)
        self._fsync_dir(directory)
        return True

    def exists(self, loc: str) -> bool:
        try:
            st = os.stat(self._path(loc))
        except (FileNotFoundError, NotADirectoryError):
            return False
        return stat.S_ISREG(st.st_mode)

    def size(self, loc: str) -> int:
        try:
            st = os.stat(self._path(loc))
        except NotADirectoryError as e:
            raise FileNotFoundError(str(e)) from e
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(f"not a file: {loc}")
        return st.st_size

    def delete(self, loc: str) -> None:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(self._path(loc))

    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        base = self._path(prefix) if prefix else self.root
        entries: list[FileEntry] = []
        stack = [(base, prefix + "/" if prefix else "")]
        while stack:
            directory, rel = stack.pop()
            try:
                it = os.scandir(directory)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, rel + entry.name + "/"))
                        elif entry.is_file():
                            st = entry.stat()
                            entries.append(FileEntry(rel + entry.name, st.st_size, st.st_mtime))
                    except FileNotFoundError:
                        continue  # removed while listing
        yield entries

    def _write_temp(self, directory: str, data: bytes, durable: bool = True) -> str:
        """A fully written (and fsynced) temporary file in `directory`."""
        self._ensure_dir(directory)
        tmp = os.path.join(directory, TEMP_PREFIX + uuid.uuid4().hex)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with open(fd, "wb", closefd=True) as f:
                f.write(data)
                f.flush()
                if self.fsync and durable:
                    os.fsync(f.fileno())
        except BaseException:
            _unlink_quietly(tmp)
            raise
        return tmp

    def _ensure_dir(self, directory: str) -> None:
        """Create `directory` and missing parents, making each new entry durable."""
        if os.path.isdir(directory):
            return
        parent = os.path.dirname(directory)
        if parent != directory:
            self._ensure_dir(parent)
        try:
            os.mkdir(directory)
        except FileExistsError:
            return
        self._fsync_dir(parent)

    def _fsync_dir(self, directory: str) -> None:
        if not self.fsync:
            return
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
