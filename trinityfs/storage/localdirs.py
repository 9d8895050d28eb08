"""Directories of the local backend: walking and making them without following links.

Every operation of `trinityfs.storage.local.LocalBackend` walks the directories of its
location from the root one component at a time with ``openat(O_DIRECTORY | O_NOFOLLOW)``
and acts on the last component relative to the directory it opened, or resolves the
whole location in one openat2(2) call with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``
where Linux offers it (see the module doc of `trinityfs.storage.local`). `LocalDirs` is
that part of the backend: descriptors of directories (made when missing, their new
entries made durable) and of files, and stat without following links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Iterator

from trinityfs.errors import SymlinkInRootError

from .dirfds import CLOEXEC, DIR_FLAGS, OPENAT2, RootDir

_CLOEXEC = CLOEXEC
_DIR_FLAGS = DIR_FLAGS
_OPENAT2 = OPENAT2  # module-level so that tests can replace it


PLACEMENT_CHOICES = 1  # off: 16 saves fsyncs but cost more CPU than they did (FORMAT-CHOICES)
KNOWN_DIRS_MAX = 8192  # directories remembered for placement (see _known)


class LocalDirs:
    """The directory walking of `LocalBackend` (a mixin: the backend holds the state)."""

    root: str
    base: tuple[str, ...]
    fsync: bool
    _root_dir: RootDir
    _lock: threading.Lock
    _unsynced_dirs: set[tuple[str, ...]]
    _known_dirs: set[str]  # directories seen to exist, as locations

    def _parts(self, loc: str) -> tuple[tuple[str, ...], str]:
        parts = self.base + tuple(loc.split("/")) if loc else self.base
        return parts[:-1], parts[-1]

    def _path(self, loc: str) -> str:
        """The plain path (for messages and test tools; operations never use it)."""
        return os.path.join(self.root, *self.base, *loc.split("/"))

    # -- walking directories without following links ----------------------------------

    def _open_dir(
        self,
        dirs: tuple[str, ...],
        *,
        create: bool = False,
        durable: bool = True,
        root: int = -1,
    ) -> int:
        """A new descriptor of root/dirs, no component a symbolic link.

        FileNotFoundError when a component is missing (unless `create`: then it is
        made, its entry durable now, or at the next `sync` when not `durable`),
        SymlinkInRootError when one is a symbolic link (or not a directory).
        `root`: the root's descriptor when the caller has just checked it (one check per
        request: `RootDir.fd`), else -1.
        """
        if root < 0:
            try:
                root = self._root_dir.fd()
            except FileNotFoundError:
                if not create:
                    raise
                self._make_root()
                root = self._root_dir.fd()
        if not dirs:  # a description of its own (listings move its offset)
            return os.open(".", _DIR_FLAGS, dir_fd=root)
        start = 0  # how many leading components the walk may skip
        make = False  # whether dirs[start] was found missing
        if _OPENAT2.enabled:
            fd = _OPENAT2.open(root, "/".join(dirs), _DIR_FLAGS)
            if fd >= 0:
                if PLACEMENT_CHOICES > 1 and self.fsync:  # only placement reads them
                    self._known(dirs)
                return fd
            # new directories: walk from the deepest one there, making the one below
            # it at once (it was just found missing, or is a link: mkdir says so)
            for start in range(len(dirs) - 1 if create else 0, 0, -1):
                if not _OPENAT2.enabled:
                    break
                fd = _OPENAT2.open(root, "/".join(dirs[:start]), _DIR_FLAGS)
                if fd >= 0:
                    return self._walk(fd, dirs, start, create=create, durable=durable, make=True)
            else:  # every probe failed: the first directory is missing too
                make = create and _OPENAT2.enabled
            start = 0
        return self._walk(
            os.open(".", _DIR_FLAGS, dir_fd=root),
            dirs,
            start,
            create=create,
            durable=durable,
            make=make,
        )

    def _walk(
        self,
        fd: int,
        dirs: tuple[str, ...],
        start: int,
        *,
        create: bool,
        durable: bool,
        make: bool = False,
    ) -> int:
        """`_open_dir` one component at a time with O_NOFOLLOW (creating what is missing),
        from `fd` (owned: closed here on failure), the descriptor of dirs[:start].

        `make`: dirs[start] was found missing, so it is made before it is opened (not
        opened, found missing, made and opened), and so is every directory below one
        this walk made (an mkdir that finds it there after all just goes on)."""
        try:
            for i in range(start, len(dirs)):
                name = dirs[i]
                try:
                    if make and create:
                        make = self._mkdir(fd, dirs, i, durable)
                        nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    else:
                        try:
                            nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                        except FileNotFoundError:
                            if not create:
                                raise
                            make = self._mkdir(fd, dirs, i, durable)
                            nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as e:
                    if e.errno in (errno.ELOOP, errno.ENOTDIR) and self._is_link(dirs[: i + 1]):
                        raise self._link_error(dirs[: i + 1]) from e
                    raise
                # `fd` names the open descriptor at every instant: a KeyboardInterrupt
                # raised when close returns must not make the handler close it twice
                fd, parent = nxt, fd
                os.close(parent)
                if PLACEMENT_CHOICES > 1 and self.fsync:
                    self._known(dirs[: i + 1])
        except BaseException:
            os.close(fd)
            raise
        return fd

    @property
    def placement_choices(self) -> int:
        """Candidate names worth drawing for a new file (`txn/placement.py`): a new
        directory costs an fsync of its parent only when writes are durable."""
        return PLACEMENT_CHOICES if self.fsync else 1

    def directories_to_make(self, loc: str, *, probe: bool = False) -> int:
        """How many directories writing `loc` would make: 0 for a directory walked or
        made here (or, with `probe`, opened now without following links), else its
        levels not known to exist (one made by another process counts as missing until
        walked). A placement hint only: writes never rely on it."""
        directory = loc.rpartition("/")[0]
        known = self._known_dirs
        if not directory or directory in known:
            return 0
        if probe and _OPENAT2.enabled:  # the walk's own check: never through a link
            dirs, _ = self._parts(loc)
            try:
                fd = _OPENAT2.open(self._root_dir.fd(), "/".join(dirs), _DIR_FLAGS)
            except OSError:
                fd = -1
            if fd >= 0:
                os.close(fd)
                known.add(directory)
                return 0
        missing, end = 1, directory.rfind("/")
        while end > 0:
            missing += directory[:end] not in known
            end = directory.rfind("/", 0, end)
        return missing

    def _known(self, dirs: tuple[str, ...]) -> None:
        """Remember that root/dirs exists (as a location: relative to `base`). Bounded:
        a lakehouse has 4,368 hash directories, but walks of exports add theirs too.
        Called only while placement is on (`placement_choices` > 1): nothing else reads
        the set, so with placement off (as shipped) a directory open does no bookkeeping;
        turned on later, it starts from an empty set (unknown counts as missing until
        walked or probed: a hint only)."""
        known = self._known_dirs
        if len(known) >= KNOWN_DIRS_MAX:
            known.clear()
        known.add("/".join(dirs[len(self.base) :]))

    def _mkdir(self, fd: int, dirs: tuple[str, ...], i: int, durable: bool) -> bool:
        """Make directory dirs[i] in `fd` (the descriptor of dirs[:i]): True when this
        made it, False when it was there (made meanwhile, or a link: opening it says)."""
        try:
            os.mkdir(dirs[i], dir_fd=fd)
        except FileExistsError:
            return False
        self._made_dir(fd, dirs[:i], durable)
        return True

    def _make_root(self) -> None:
        """Create the root directory (outside the lakehouse: links there are the user's)."""
        missing = []
        directory = self.root
        while not os.path.isdir(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for new in reversed(missing):
            try:
                os.mkdir(new)
            except FileExistsError:
                continue
            if self.fsync:
                parent = os.open(os.path.dirname(new), os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(parent)
                finally:
                    os.close(parent)

    def _made_dir(self, parent_fd: int, parent: tuple[str, ...], durable: bool) -> None:
        """A new directory entry in `parent`: make it durable now or at the next sync."""
        if not self.fsync:
            return
        if durable:
            os.fsync(parent_fd)
        else:
            with self._lock:
                self._unsynced_dirs.add(parent)

    def _is_link(self, parts: tuple[str, ...]) -> bool:
        try:
            return stat.S_ISLNK(os.lstat(os.path.join(self.root, *parts)).st_mode)
        except OSError:
            return False

    def _link_error(self, parts: tuple[str, ...]) -> SymlinkInRootError:
        return SymlinkInRootError(
            f"{'/'.join(parts)} under {self.root} is a symbolic link: trinityfs never follows "
            "links inside a lakehouse root (remove it, or point the lakehouse at the real "
            "directory)"
        )

    @contextlib.contextmanager
    def _dir(self, loc: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
        dirs, name = self._parts(loc)
        fd = self._open_dir(dirs, create=create)
        try:
            yield fd, name
        finally:
            os.close(fd)

    def _open_file(self, loc: str, flags: int, root: int = -1) -> int:
        """A new descriptor of the file `loc` (never through a link); `root` as for
        `_open_dir`."""
        dirs, name = self._parts(loc)
        if _OPENAT2.enabled:  # the whole location in one call (no O_CREAT: mode stays 0)
            if root < 0:
                with contextlib.suppress(FileNotFoundError):
                    root = self._root_dir.fd()
            if root >= 0:
                fd = _OPENAT2.open(root, "/".join((*dirs, name)), flags | os.O_NOFOLLOW | _CLOEXEC)
                if fd >= 0:
                    return fd
        dir_fd = self._open_dir(dirs, root=root)
        fd = -1
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise self._link_error((*dirs, name)) from e
            raise
        finally:
            try:
                os.close(dir_fd)
            except BaseException:  # interrupted: the caller never gets `fd` to close
                if fd >= 0:
                    os.close(fd)
                raise
        return fd

    def _root_fd(self) -> int:
        """The root's shared descriptor (never closed by its user), -1 when missing."""
        try:
            return self._root_dir.fd()
        except FileNotFoundError:
            return -1

    def _stat(self, loc: str) -> os.stat_result:
        dirs, name = self._parts(loc)
        if not dirs:  # a file right in the root (a root probe): no directory to walk
            return os.stat(name, dir_fd=self._root_dir.fd(), follow_symlinks=False)
        with self._dir(loc) as (fd, name):
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
