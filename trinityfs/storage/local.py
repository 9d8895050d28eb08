"""Local-disk backend: atomic renames and hard links on a POSIX filesystem.

Symbolic links inside the root are never followed. Every operation walks the
directories of its location from the root one component at a time with
``openat(O_DIRECTORY | O_NOFOLLOW)`` and acts on the last component relative to the
directory it opened (``O_NOFOLLOW`` for files, ``unlinkat``, ``linkat``, ``renameat``,
``fstatat`` without following), so a link planted anywhere below the root (a hash
prefix directory ``0101`` pointing elsewhere, ``_exports/e1 -> /another/lakehouse``, a
node file pointing at ``/etc/passwd``) is an error naming it (SymlinkInRootError),
never a way out of the root. The root itself may be a link (the user chose it).
Listings skip links (they are not ours, so expiration never sees them); listing a
directory that is itself a link is a SymlinkInRootError.

Where Linux offers openat2(2), a whole location is resolved in one call below the root
directory's descriptor with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``: the kernel refuses
a link at any component and any step out of the root, the same guarantee as the walk,
checked afresh on every operation (no directory below the root is ever kept open). Any
failure of that call (a missing directory to create, a link, no openat2) falls back to
the walk, which creates what is missing and names the link in its error.
The root's own descriptor is opened once per backend (see `trinityfs.storage.dirfds.RootDir`).
The walk is `trinityfs.storage.localdirs.LocalDirs`; descriptor-level helpers of the
writes are in `trinityfs.storage.localio`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as futures_wait

from trinityfs.errors import CorruptFileError, SymlinkInRootError, UnsupportedStorageError

from .base import TEMP_PREFIX, Backend, FileEntry
from .dirfds import CLOEXEC, RootDir
from .localdirs import LocalDirs
from .localio import (
    _flushed,
    _flusher,
    _fsync_and_close,
    _overwrite_in_place,
    _start_writeback,
    _unlink_quietly,
    _write_all,
)

# os.link failing with these means the filesystem has no hard links.
_NO_LINK_ERRNOS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.ENOSYS}

# Above this many files a batch is made durable by one sync() instead of an fsync each.
SYNC_EACH_MAX_FILES = 64

_CLOEXEC = CLOEXEC


def _check_in_the_way(fd: int, name: str, loc: str) -> None:
    """After EEXIST: a regular file at `name` is a lost race; anything else (a directory,
    a symbolic link, a FIFO) would be taken for one on every retry, while readers skip
    it, so it is reported as damage naming the entry (never written through or over)."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return  # the file that was there is gone again: still a lost race
    if stat.S_ISREG(st.st_mode):
        return
    raise CorruptFileError(
        loc,
        f"{_kind_of(st.st_mode)} is in the way of creating it (never written through or "
        "over): remove it",
    )


def _kind_of(mode: int) -> str:
    """What is at a name where a regular file should be, for messages."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "not a regular file"


def _read_all(fd: int, size: int) -> bytes:
    """The bytes of the regular file `fd`, `size` long when fstat looked: one read when
    it still is (the format's files never change in place), else read to the end."""
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    chunks = [data]
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


#: temporary files written for one overwrite when each is removed before its rename
WRITE_TEMP_ATTEMPTS = 3


class LocalBackend(LocalDirs, Backend):
    """Files under a local directory.

    Every write goes to a temporary file in the target directory, is fsynced, then
    renamed (overwrite) or hard-linked (create-if-absent) into place, so a reader never
    sees a partial file. `fsync=False` skips the fsyncs (faster, not crash-safe).
    `base` is a directory below `root` this backend is confined to (a full export): its
    components are walked without following links like every other.
    """

    hint_interval = 1
    cheap_exists = True

    write_parallelism = 1  # threads only contend for the GIL and directory locks here

    def __init__(
        self,
        root: str,
        *,
        fsync: bool = True,
        base: tuple[str, ...] = (),
        _root_dir: RootDir | None = None,
    ) -> None:
        self.root = os.path.abspath(root)
        self.base = base
        self.fsync = fsync
        self._lock = threading.Lock()
        self._unsynced_dirs: set[tuple[str, ...]] = set()  # parents of new directories
        self._known_dirs: set[str] = set()  # directories seen to exist (placement hint)
        self._root_dir = _root_dir if _root_dir is not None else RootDir(self.root)

    def child(self, prefix: str) -> LocalBackend:
        """The backend of directory `prefix` below this one (still never following links)."""
        return LocalBackend(
            self.root,
            fsync=self.fsync,
            base=self.base + tuple(prefix.strip("/").split("/")),
            _root_dir=self._root_dir,
        )

    def close(self) -> None:
        """Close the root's descriptor (a later operation opens it again)."""
        self._root_dir.close()

    # -- the Backend interface --------------------------------------------------------

    def read(self, loc: str) -> bytes:
        """The file's bytes. Anything but a regular file at `loc` (a FIFO planted there,
        never waited on: O_NONBLOCK; a directory; a device) is CorruptFileError naming it."""
        try:
            fd = self._open_file(loc, os.O_RDONLY | os.O_NONBLOCK)
        except NotADirectoryError as e:
            raise FileNotFoundError(str(e)) from e
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise CorruptFileError(
                    loc,
                    f"{_kind_of(st.st_mode)} is where a file should be (never read): remove it",
                )
            return _read_all(fd, st.st_size)
        finally:
            os.close(fd)

    def read_if_regular(self, loc: str) -> bytes | None:
        """`read`, but None when `loc` is a symbolic link (never followed), a directory,
        a FIFO (never waited on: O_NONBLOCK) or anything else but a regular file."""
        dirs, name = self._parts(loc)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
        try:
            if not dirs:  # a marker: right in the root, opened below its descriptor
                fd = _open_or_none(self._root_dir.fd(), name, flags)
            else:
                with self._dir(loc) as (dir_fd, name):
                    fd = _open_or_none(dir_fd, name, flags)
        except NotADirectoryError as e:
            raise FileNotFoundError(str(e)) from e
        if fd < 0:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            return _read_all(fd, st.st_size)
        finally:
            os.close(fd)

    def write(self, loc: str, data: bytes, durable: bool = True) -> None:
        with self._dir(loc, create=True) as (fd, name):
            for attempt in range(WRITE_TEMP_ATTEMPTS):
                tmp = self._write_temp(fd, data, durable)
                try:
                    os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
                    break
                except FileNotFoundError:
                    # The temporary file was removed before its rename: a sweep of
                    # leftover temporary files whose clock runs far ahead. Write it again.
                    if attempt + 1 == WRITE_TEMP_ATTEMPTS:
                        raise
                except BaseException:
                    _unlink_quietly(fd, tmp)
                    raise
            if durable and self.fsync:
                os.fsync(fd)

    def overwrite_advisory(self, loc: str, data: bytes) -> None:
        """In place under an exclusive flock, never flushed (see `_overwrite_in_place`).

        Renaming a new file over the old one (as `write` does) makes ext4 write the new
        file out at once (auto_da_alloc): about 0.6 ms of every local commit. In place,
        a reader sees the old text, a prefix of it (a smaller version: the hint lags),
        old text padded with zero bytes (malformed: ignored), the new text, or - a read
        torn by the copy of a few bytes - a mix, possibly a version above the latest:
        readers probe the root it names and fall back when it is missing, so a hint is
        never a wrong answer (see trinityfs/txn/roots.py). A file with another hard link
        (it would change the other name's content too), a symbolic link or anything but
        a regular file is replaced by `write` instead (a rename follows no link).
        """
        dirs, name = self._parts(loc)
        root = -1
        if not dirs:  # the hint: right in the root, opened below its descriptor
            with contextlib.suppress(FileNotFoundError):
                root = self._root_dir.fd()
        if root >= 0:
            in_place = _overwrite_in_place(root, name, data)
        else:
            with self._dir(loc, create=True) as (dir_fd, name):
                in_place = _overwrite_in_place(dir_fd, name, data)
        if not in_place:
            self.write(loc, data, durable=False)

    def write_new_unsynced(self, loc: str, data: bytes) -> None:
        # A new unique name is referenced by no root until the batch is synced and the
        # commit's root created, so it may be written in place and synced once for all.
        dirs, name = self._parts(loc)
        fd = self._open_dir(dirs, create=True, durable=False)
        try:
            out = os.open(
                name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
                0o666,
                dir_fd=fd,
            )
            try:
                _write_all(out, data)
                if self.fsync:
                    _start_writeback(out)  # the device writes it while the root is built
            except BaseException:
                _unlink_quietly(fd, name)  # ours (O_EXCL): no half-written file stays
                raise
            finally:
                os.close(out)
        finally:
            os.close(fd)

    def sync(self, locs: Sequence[str]) -> None:
        if not self.fsync:
            return
        with self._lock:
            new_dirs = set(self._unsynced_dirs)
        if len(locs) + len(new_dirs) > SYNC_EACH_MAX_FILES:
            os.sync()  # one flush of file data and directory entries for a whole batch
        else:
            parents = new_dirs | {self._parts(loc)[0] for loc in locs}
            root = self._root_fd()  # checked once for the whole batch (-1: let each raise)
            for dirs in parents:
                fd = self._open_dir(dirs, root=root)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            for loc in locs:
                fd = self._open_file(loc, os.O_RDONLY, root=root)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        with self._lock:
            self._unsynced_dirs -= new_dirs

    def start_sync(self, locs: Sequence[str]) -> Callable[[], None]:
        """The same flushes as `sync`, all at once on background threads, when the
        returned function is first called (it waits for them, and raises what a flush
        raised, on every call).

        `write_new_unsynced` has already started writing the files out, so by the time
        a commit calls it (beside the flush of its root's temporary file, see
        `create_if_absent_after`) only the journal commit is left: one for all of them
        instead of one for the definitions and another for the root. Nothing is held
        open until then (a transaction that stops before its root holds no descriptor).
        """
        if not self.fsync or len(locs) > SYNC_EACH_MAX_FILES:
            self.sync(locs)
            return _flushed
        with self._lock:
            new_dirs = set(self._unsynced_dirs)
        parents = new_dirs | {self._parts(loc)[0] for loc in locs}
        flushes: list[Future[None]] = []
        failed: list[BaseException] = []

        def wait() -> None:
            if failed:
                raise failed[0]
            if not flushes:
                try:
                    pooled, inline = self._submit_flushes(parents, locs)
                except BaseException as exc:
                    failed.append(exc)
                    raise
                flushes.extend(pooled)
                try:
                    if inline is not None:
                        _fsync_and_close(inline)  # this thread would only wait meanwhile
                except Exception as exc:
                    failed.append(exc)
                    raise
                except BaseException:
                    flushes.clear()  # interrupted: the next call flushes everything again
                    raise
            for flush in flushes:
                flush.result()  # raises the OSError of a failed flush (again if called again)
            with self._lock:
                self._unsynced_dirs -= new_dirs

        return wait

    def _submit_flushes(
        self, dirs: set[tuple[str, ...]], locs: Sequence[str]
    ) -> tuple[list[Future[None]], int | None]:
        """An fsync per directory and file, each on a thread of its own (fsync releases
        the GIL) but the last one, whose descriptor is returned for the caller's thread
        to flush and close (it would only wait meanwhile: one hand-off fewer per
        commit); the descriptors are opened here (a missing file fails now)."""
        fds: list[int] = []
        root = self._root_fd()  # checked once for the whole batch (-1: let each raise)
        try:
            for parts in dirs:
                fds.append(self._open_dir(parts, root=root))
            for loc in locs:
                fds.append(self._open_file(loc, os.O_RDONLY, root=root))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        inline = fds.pop() if fds else None  # None: nothing to flush at all
        return [_flusher().submit(_fsync_and_close, fd) for fd in fds], inline

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        with self._dir(loc, create=True) as (fd, name):
            tmp = self._write_temp(fd, data)
            return self._link_temp(fd, tmp, name, loc)

    def create_if_absent_after(
        self, loc: str, data: bytes, first_durable: Callable[[], None]
    ) -> bool:
        """Create `loc` once `first_durable()` (the flush of the files it references)
        returned. The temporary file is written, its write-out started and its fsync
        run beside `first_durable`, so the filesystem commits the referenced files and
        the new file's content together; the name is linked only after both are
        durable. A failure of either leaves no file (the temporary one is removed)."""
        return self._create(loc, data, first_durable)[0]

    def create_noting_identity(
        self, loc: str, data: bytes, first_durable: Callable[[], None] | None = None
    ) -> tuple[bool, tuple[int, int, int, int] | None]:
        """`create_if_absent_after` (without a wait when `first_durable` is None) and
        the new file's `identity`, from an fstat of the descriptor that wrote it once
        its content is durable: no stat of the name after the link (a hard link changes
        only the change time and link count, neither part of the identity). None when
        that fstat failed (best effort: the file was still created)."""
        return self._create(loc, data, first_durable)

    def _create(
        self, loc: str, data: bytes, first_durable: Callable[[], None] | None
    ) -> tuple[bool, tuple[int, int, int, int] | None]:
        dirs, name = self._parts(loc)
        fd = self._root_fd() if not dirs else -1  # a root: right below its descriptor
        owned = fd < 0
        if owned:
            fd = self._open_dir(dirs, create=True)
        try:
            tmp, out = self._open_temp(fd, data)
            own: Future[None] | None = None
            try:
                try:
                    if self.fsync and first_durable is None:
                        os.fsync(out)  # nothing to flush beside it
                    elif self.fsync:
                        _start_writeback(out)
                        own = _flusher().submit(os.fsync, out)
                    if first_durable is not None:
                        first_durable()
                    if own is not None:
                        own.result()
                    found = _fd_identity(out)
                finally:
                    if own is not None:
                        futures_wait([own])  # interrupted above: the fsync still holds it
                    os.close(out)
            except BaseException:
                _unlink_quietly(fd, tmp)
                raise
            created = self._link_temp(fd, tmp, name, loc)
            return created, found if created else None
        finally:
            if owned:
                os.close(fd)

    def _link_temp(self, fd: int, tmp: str, name: str, loc: str) -> bool:
        """Hard-link the durable temporary file `tmp` to `name` unless it exists, remove
        `tmp`, and make the new entry durable; False when `name` existed."""
        try:
            os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        except FileExistsError:
            _check_in_the_way(fd, name, loc)
            return False
        except OSError as e:
            if e.errno in _NO_LINK_ERRNOS:
                raise UnsupportedStorageError(
                    f"cannot create {loc!r} atomically: the filesystem under {self.root} "
                    f"does not support hard links ({e.strerror})"
                ) from e
            raise
        finally:
            _unlink_quietly(fd, tmp)
        if self.fsync:
            os.fsync(fd)
        return True

    def exists(self, loc: str) -> bool:
        """Whether a regular file is at `loc`. LakehouseNotFoundError when the root
        directory was open and is gone: answering "missing" would let a warm reader
        keep serving the version it remembers from a removed lakehouse."""
        try:
            root = self._root_dir.fd()  # LakehouseNotFoundError when removed or replaced
        except FileNotFoundError:
            return False  # never made yet (a lakehouse being created probes first)
        try:
            if self.base or "/" in loc:
                st = self._stat(loc)
            else:  # a file right in the root: a warm reader's probe of the next root
                st = os.stat(loc, dir_fd=root, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return stat.S_ISREG(st.st_mode)

    def identity(self, loc: str) -> tuple[int, int, int, int] | None:
        """(device, inode, size, mtime in ns) of the regular file at `loc`, None when
        missing: one stat, like `exists`. A deleted file's inode is soon reused (ext4),
        so size and mtime come too; a new file with the same inode, size and mtime
        would need to be written within the same tick of the kernel's coarse clock.
        The change time is left out: a hard link (a backup tool's) changes it."""
        try:
            root = self._root_dir.fd()  # LakehouseNotFoundError when removed or replaced
        except FileNotFoundError:
            return None
        try:
            if self.base or "/" in loc:
                st = self._stat(loc)
            else:
                st = os.stat(loc, dir_fd=root, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return _identity(st)

    def mtime(self, loc: str) -> float | None:
        """One stat, like `exists` (`identity` carries the mtime in ns)."""
        found = self.identity(loc)
        if found is None:
            raise FileNotFoundError(loc)
        return found[3] / 1e9

    def size(self, loc: str) -> int:
        try:
            st = self._stat(loc)
        except NotADirectoryError as e:
            raise FileNotFoundError(str(e)) from e
        if stat.S_ISLNK(st.st_mode):
            dirs, name = self._parts(loc)
            raise self._link_error((*dirs, name))
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(f"not a file: {loc}")
        return st.st_size

    def delete(self, loc: str) -> None:
        try:
            with self._dir(loc) as (fd, name):
                os.unlink(name, dir_fd=fd)  # a link is removed itself, never its target
        except (FileNotFoundError, NotADirectoryError):
            pass

    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        return self._list(prefix, recursive=True)

    def list_dir_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        """One directory's files, its subdirectories left unopened."""
        return self._list(prefix, recursive=False)

    def _list(self, prefix: str, *, recursive: bool) -> Iterator[list[FileEntry]]:
        entries: list[FileEntry] = []
        dirs = tuple(prefix.split("/")) if prefix else ()
        stack = [(self.base + dirs, prefix + "/" if prefix else "")]
        top = True
        root = self._root_fd()  # checked once for the whole listing (-1: let it raise)
        while stack:
            parts, rel = stack.pop()
            try:
                fd = self._open_dir(parts, root=root)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except SymlinkInRootError:
                if top:
                    raise  # the directory asked for is a link: say so, list nothing
                continue  # never reached: links below are skipped by scandir
            top = False
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                if recursive:
                                    stack.append(((*parts, entry.name), rel + entry.name + "/"))
                            elif entry.is_file(follow_symlinks=False):
                                st = entry.stat(follow_symlinks=False)
                                entries.append(FileEntry(rel + entry.name, st.st_size, st.st_mtime))
                        except FileNotFoundError:
                            continue  # removed while listing
            finally:
                os.close(fd)
        yield entries

    def _write_temp(self, dir_fd: int, data: bytes, durable: bool = True) -> str:
        """A fully written (and fsynced) temporary file in the directory `dir_fd`."""
        tmp, fd = self._open_temp(dir_fd, data)
        try:
            try:
                if self.fsync and durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            _unlink_quietly(dir_fd, tmp)
            raise
        return tmp

    def _open_temp(self, dir_fd: int, data: bytes) -> tuple[str, int]:
        """(name, open descriptor) of a new temporary file in `dir_fd` holding `data`
        (written, not flushed)."""
        tmp = TEMP_PREFIX + os.urandom(16).hex()
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
            0o666,
            dir_fd=dir_fd,
        )
        try:
            _write_all(fd, data)
        except BaseException:
            os.close(fd)
            _unlink_quietly(dir_fd, tmp)
            raise
        return tmp, fd


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """What `LocalBackend.identity` answers for a file with status `st`."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _fd_identity(fd: int) -> tuple[int, int, int, int] | None:
    """The identity of the open file `fd`, None when fstat fails (best effort)."""
    try:
        return _identity(os.fstat(fd))
    except OSError:
        return None


def _open_or_none(dir_fd: int, name: str, flags: int) -> int:
    """`os.open(name, flags, dir_fd=dir_fd)`, or -1 when it is a symbolic link (flags
    hold O_NOFOLLOW) or a socket: no regular file to read."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO):
            return -1
        raise
