"""FUSE operations of a trinityfs mount, over the catalog API and the shared fs modules.

The tree a mount shows is the one of the trinity:// filesystem (`trinityfs.fs.paths`):
`/` the latest version (namespaces as directories, tables and views as JSON files,
`trinityfs.fs.content`), `/v` the versions, `/v/<n>`, `/v/<ISO time>`, `/v/<export>`
read-only, `/v/latest` an alias of `/`. Errors become errno values through the one
mapping of `trinityfs.fs.errors`.

Consistency: every open file reads the content of ONE version, fixed when it is opened
(files are served with direct_io, so the kernel never mixes cached pages of another
version into a read). A file written through the mount is committed, as one commit,
when it is flushed (close, fsync): the content is parsed first, so invalid JSON gives
EINVAL at close() with nothing committed. The commit is made on top of the version the
file was opened at: if another writer changed that table or view in between, the close
fails with EBUSY (and a log line) and nothing is committed -- no lost update, never a
half-applied change. Temporary files of editors and tools are kept in memory
(`trinityfs.fuse.scratch`) until they are renamed onto a real name.

This module does not import the FUSE binding: the class is plain Python (usable in unit
tests); `trinityfs.fuse.mount` hands it to mfusepy.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from trinityfs.catalog import CatalogSnapshot, Lakehouse, ObjectRef
from trinityfs.errors import NotFoundError, TrinityError, VersionNotFoundError
from trinityfs.fs import content as fscontent
from trinityfs.fs.errors import errno_of, message_of, to_os_error
from trinityfs.fs.model import move_namespace, select_label, versions_dir_names
from trinityfs.fs.paths import VERSIONS_DIR, TrinityPath, encode_name, parse_path
from trinityfs.fuse.scratch import DEFAULT_PATTERNS, Origin, ScratchFile, is_scratch_name

log = logging.getLogger("trinityfs.fuse")

FILE_KINDS = ("table", "view")
MAX_FILE_BYTES = 64 * 1024 * 1024  # a definition is small; refuse runaway writes (EFBIG)
XATTR_PREFIX = "user."
XATTR_CREATE, XATTR_REPLACE = 1, 2
ENOATTR = getattr(errno, "ENOATTR", errno.ENODATA)
BLOCK = 4096
MILLIS_NS = 1_000_000


def _os_error(code: int, message: str, path: str | None = None) -> OSError:
    return OSError(code, message, path) if path else OSError(code, message)


class _LRU:
    """A small thread-safe LRU map."""

    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def pop(self, key: Any) -> Any:
        with self._lock:
            return self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


@dataclass
class _View:
    """A resolved path: the version it shows and what may be done there."""

    tp: TrinityPath
    snapshot: CatalogSnapshot | None  # None for the versions directory /v
    writable: bool = False  # the latest version of a read-write mount
    history: bool = True  # a version of this lakehouse (not an export)
    fresh: bool = False  # the snapshot was probed for this call

    @property
    def key(self) -> tuple[str, str]:
        return (self.tp.namespace or "", self.tp.name or "")


@dataclass
class _ReadHandle:
    data: bytes
    version: int | None


@dataclass
class _WriteHandle:
    """A table or view open for writing: bytes in memory, committed at flush."""

    namespace: str
    name: str
    base: int  # the version the file was opened at (the commit builds on it)
    data: bytearray
    new: bool  # the object did not exist when opened
    changed: bool = False  # written, truncated or touched since the last commit
    # emptied by O_TRUNC at open: committed at release if nothing else happens (a shell's
    # `> file` closes a dup of the descriptor before writing: that flush must not commit)
    truncated: bool = False
    committed: bool = False
    failed: bool = False  # the last commit attempt was refused (EINVAL/EBUSY)
    orphaned: bool = False  # unlinked or replaced while open: commits nothing
    append: bool = False
    version: int | None = None  # the last version this handle committed
    streaming: bool = True  # every write so far went to the end: checked as it comes
    rejected: str | None = None  # why a write was refused: the handle commits nothing

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
        def wrapper(self: TrinityOperations, path: str | None, *args: Any) -> Any:
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
            except ValueError as exc:  # ContentError, InvalidRequest
                log.warning("%s %s: %s", fn.__name__, path, message_of(exc))
                raise _os_error(errno.EINVAL, message_of(exc), path) from exc
            except Exception as exc:
                log.exception("%s %s failed", fn.__name__, path)
                raise _os_error(errno.EIO, str(exc), path) from exc

        return wrapper

    return decorate


class TrinityOperations:
    """The FUSE operations (mfusepy `Operations` protocol) of one mounted lakehouse."""

    use_ns = True  # times in integer nanoseconds

    def __init__(
        self,
        lake: Lakehouse,
        *,
        read_only: bool = False,
        version: int | None = None,
        latest_ttl: float = 1.0,
        scratch_patterns: tuple[str, ...] = DEFAULT_PATTERNS,
        uid: int | None = None,
        gid: int | None = None,
        on_init: Callable[[], None] | None = None,
        prefetch_threads: int = 8,
    ):
        self.lake = lake
        self.pinned = version
        self.read_only = read_only or version is not None
        self.latest_ttl = latest_ttl
        self.scratch_patterns = scratch_patterns
        self.uid = os.getuid() if uid is None else uid
        self.gid = os.getgid() if gid is None else gid
        self.on_init = on_init
        self._lock = threading.RLock()  # overlay, handles, latest cache
        self._commit_lock = threading.Lock()  # this mount's commits, one at a time
        self._latest_snap: CatalogSnapshot | None = None
        self._latest_checked = 0.0
        self._oldest: int | None = None
        self._snapshots = _LRU(128)  # version -> CatalogSnapshot
        self._exports = _LRU(64)  # name -> (CatalogSnapshot, checked)
        self._times = _LRU(4096)  # time label millis -> version
        self._contents = _LRU(50000)  # (kind, location) -> rendered bytes
        self._written = _LRU(200000)  # (kind, ns, name, location) -> version that wrote it
        self._attr_cache = _LRU(100000)  # (version key, ns, name, writable) -> attrs
        self._listed = _LRU(64)  # (version key, ns) -> (view, names) not prefetched yet
        self._handles: dict[int, Any] = {}
        self._next_fh = 1
        self._overlay = _Overlay()
        self.prefetch_threads = prefetch_threads
        self._pool = (
            ThreadPoolExecutor(prefetch_threads, thread_name_prefix="trinityfs-prefetch")
            if prefetch_threads > 0
            else None
        )

    # -- lifecycle ---------------------------------------------------------------------

    def init(self, path: str) -> None:
        if self.on_init is not None:
            self.on_init()

    def destroy(self, path: str) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            scratch = len(self._overlay.scratch)
            writers = [h for h in self._handles.values() if isinstance(h, _WriteHandle)]
        if scratch:
            log.info("discarding %d temporary file(s) kept in memory", scratch)
        for h in writers:
            if h.changed and not h.orphaned:
                log.warning(
                    "%s/%s was still open for writing at unmount: not committed",
                    h.namespace,
                    h.name,
                )

    # -- versions and snapshots ------------------------------------------------------------

    def _at(self, version: int) -> CatalogSnapshot:
        snap = self._snapshots.get(version)
        if snap is None:
            snap = self.lake.at(version)
            self._snapshots.put(version, snap)
        return snap

    def _latest(self, fresh: bool = False) -> tuple[CatalogSnapshot, bool]:
        """The latest snapshot (probed at most every latest_ttl seconds unless `fresh`)."""
        now = time.monotonic()
        with self._lock:
            snap, checked = self._latest_snap, self._latest_checked
        if snap is not None and not fresh and now - checked < self.latest_ttl:
            return snap, False
        version = self.lake.latest_version()
        if snap is None or snap.version != version:
            snap = self._at(version)
        with self._lock:
            if self._latest_snap is None or snap.version >= self._latest_snap.version:
                self._latest_snap, self._latest_checked = snap, now
                self._oldest = None
            snap = self._latest_snap
        return snap, True

    def _keys(self) -> Any:
        """The key codec of the latest snapshot seen (to name objects in errors)."""
        with self._lock:
            snap = self._latest_snap
        return None if snap is None else snap.keys

    def _invalidate_latest(self) -> None:
        with self._lock:
            self._latest_checked = 0.0

    def _oldest_version(self) -> int:
        with self._lock:
            oldest = self._oldest
        if oldest is None:
            oldest = self.lake.oldest_version()
            with self._lock:
                self._oldest = oldest
        return oldest

    def _export(self, name: str) -> CatalogSnapshot:
        cached = self._exports.get(name)
        now = time.monotonic()
        if cached is not None and now - cached[1] < max(self.latest_ttl, 1.0):
            return cached[0]
        snap = self.lake.at(export=name)
        self._exports.put(name, (snap, now))
        return snap

    def _export_names(self) -> list[str]:
        """Names of the exports (listed at most every latest_ttl seconds)."""
        cached = self._exports.get(("names",))
        now = time.monotonic()
        if cached is not None and now - cached[1] < max(self.latest_ttl, 1.0):
            return cached[0]
        names = [export.name for export in self.lake.exports()]
        self._exports.put(("names",), (names, now))
        return names

    def _version_at(self, millis: int) -> int:
        version = self._times.get(millis)
        if version is None:
            version = self.lake.version_at(millis)
            latest, _ = self._latest()
            if version < latest.version:  # the answer can no longer change
                self._times.put(millis, version)
        return version

    def _view(self, path: str, fresh: bool = False) -> _View:
        tp = parse_path(path)
        ref = tp.ref
        if ref is None:
            return _View(tp, None)
        if ref.kind == "latest":
            if tp.prefix == "" and self.pinned is not None:
                return _View(tp, self._at(self.pinned))
            snap, probed = self._latest(fresh)
            return _View(tp, snap, writable=not self.read_only, fresh=probed)
        if ref.kind == "number":
            return _View(tp, self._at(ref.number))
        if select_label(ref.text, ref.millis, self._export_names()) == "time":
            return _View(tp, self._at(self._version_at(ref.millis)))
        return _View(tp, self._export(ref.text), history=False)  # NotFound if none

    def _refresh(self, view: _View) -> _View | None:
        """The same path at a freshly probed latest version, if the view could be stale."""
        if view.tp.ref is None or not view.tp.ref.is_latest or view.fresh:
            return None
        if view.tp.prefix == "" and self.pinned is not None:
            return None
        fresh = self._view(view.tp.path, fresh=True)
        return fresh if fresh.snapshot.version != view.snapshot.version else None

    # -- catalog lookups ------------------------------------------------------------

    @staticmethod
    def _locate(snap: CatalogSnapshot, namespace: str, name: str) -> tuple[str, str] | None:
        """(kind, definition location) of a table or view, or None."""
        for kind in FILE_KINDS:
            location = snap.object_location(kind, namespace, name)
            if location is not None:
                return kind, location
        return None

    def _content(self, snap: CatalogSnapshot, kind: str, ns: str, name: str, loc: str) -> bytes:
        data = self._contents.get((kind, loc))
        if data is None:
            msg = snap.read_definition(ObjectRef(ns, name, kind), loc)  # type: ignore[arg-type]
            data = fscontent.render(kind, msg)
            self._contents.put((kind, loc), data)
        return data

    def _written_version(self, view: _View, kind: str, ns: str, name: str | None, loc: str) -> int:
        """The version whose commit wrote this definition (binary search over versions).

        A definition location is written once, so the versions holding it form one run
        that ends at the viewed version; the first version of the run is the one sought.
        (A namespace is identified by its definition's bytes instead of a location.)
        """
        snap = view.snapshot
        if not view.history:
            return snap.version
        key = (kind, ns, name, loc)
        found = self._written.get(key)
        if found is not None and found <= snap.version:
            return found
        lo, hi = self._oldest_version(), snap.version
        while lo < hi:
            mid = (lo + hi) // 2
            try:
                older = self._at(mid)
                if name is None:
                    here = older.namespace_exists(ns) and self._namespace_token(older, ns) == loc
                else:
                    here = older.object_location(kind, ns, name) == loc
            except (NotFoundError, VersionNotFoundError):
                here = False
            if here:
                hi = mid
            else:
                lo = mid + 1
        self._written.put(key, hi)
        return hi

    @staticmethod
    def _namespace_token(snap: CatalogSnapshot, ns: str) -> str:
        """Identifies one written namespace definition (its serialized bytes)."""
        return snap.describe_namespace(ns).SerializeToString(deterministic=True).hex()

    def _time_ns(self, version: int) -> int:
        try:
            return self._at(version).created_at_millis * MILLIS_NS
        except TrinityError:
            return 0

    # -- attributes -----------------------------------------------------------------

    def _dir_attrs(self, mtime_ns: int, writable: bool, nlink: int = 2) -> dict[str, Any]:
        return {
            "st_mode": stat.S_IFDIR | (0o755 if writable else 0o555),
            "st_nlink": nlink,
            "st_size": 0,
            "st_uid": self.uid,
            "st_gid": self.gid,
            "st_atime": mtime_ns,
            "st_mtime": mtime_ns,
            "st_ctime": mtime_ns,
            "st_blksize": BLOCK,
        }

    def _file_attrs(self, size: int, mtime_ns: int, writable: bool) -> dict[str, Any]:
        return {
            "st_mode": stat.S_IFREG | (0o644 if writable else 0o444),
            "st_nlink": 1,
            "st_size": size,
            "st_blocks": (size + 511) // 512,
            "st_uid": self.uid,
            "st_gid": self.gid,
            "st_atime": mtime_ns,
            "st_mtime": mtime_ns,
            "st_ctime": mtime_ns,
            "st_blksize": BLOCK,
        }

    def _handle_attrs(self, handle: Any) -> dict[str, Any]:
        if isinstance(handle, _ScratchHandle):
            return self._file_attrs(len(handle.file.data), handle.file.mtime_ns, True)
        if isinstance(handle, _WriteHandle):
            return self._file_attrs(len(handle.data), time.time_ns(), True)
        return self._file_attrs(len(handle.data), self._time_ns(handle.version or 0), False)

    def _pending(self, key: tuple[str, str], hidden: bool = False) -> _WriteHandle | None:
        """An open handle writing `key` that the catalog does not show: a new object not
        committed yet, or (`hidden`) an object hidden by `mv t t~` being written again."""
        with self._lock:
            for h in self._handles.values():
                if (
                    isinstance(h, _WriteHandle)
                    and h.key == key
                    and not h.orphaned
                    and (hidden or (h.new and not h.committed))
                ):
                    return h
        return None

    @_fuse_op(lookup=True)
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        if fh:
            with self._lock:
                handle = self._handles.get(fh)
            if handle is not None:
                return self._handle_attrs(handle)
        view = self._view(path)
        return self._attrs(view)

    def _attrs(self, view: _View) -> dict[str, Any]:
        tp, snap = view.tp, view.snapshot
        if snap is None:  # /v
            latest, _ = self._latest()
            return self._dir_attrs(self._time_ns(latest.version), False, nlink=1)
        if tp.extra:
            raise _os_error(errno.ENOENT, "no such file or directory", tp.path)
        if tp.is_root:
            return self._dir_attrs(snap.created_at_millis * MILLIS_NS, view.writable, nlink=1)
        ns = tp.namespace
        if tp.is_namespace:
            if not snap.namespace_exists(ns):
                fresh = self._refresh(view)
                if fresh is not None:
                    return self._attrs(fresh)
                raise _os_error(errno.ENOENT, f"no namespace {ns!r}", tp.path)
            token = self._namespace_token(snap, ns)
            version = self._written_version(view, "namespace", ns, None, token)
            return self._dir_attrs(self._time_ns(version), view.writable)
        name = tp.name
        if view.writable:
            with self._lock:
                scratch = self._overlay.scratch.get(view.key)
                hidden = view.key in self._overlay.hidden
            if scratch is not None:
                return self._file_attrs(len(scratch.data), scratch.mtime_ns, True)
            pending = self._pending(view.key, hidden)
            if hidden and pending is None:
                raise _os_error(errno.ENOENT, "no such file", tp.path)
            if pending is not None:
                return self._file_attrs(len(pending.data), time.time_ns(), True)
        attrs = self._object_attrs(view, ns, name)
        if attrs is None:
            fresh = self._refresh(view)
            if fresh is not None:
                return self._attrs(fresh)
            raise _os_error(errno.ENOENT, "no such table or view", tp.path)
        return attrs

    def _object_attrs(self, view: _View, ns: str, name: str) -> dict[str, Any] | None:
        """Attributes of a table or view of the view's version (None when missing).

        A version never changes: they are computed once (ls -l asks twice, lookup then
        getattr), and the first one asked for in a listed namespace starts computing the
        others in background threads (see `_prefetch`)."""
        snap = view.snapshot
        version_key = snap.version if view.history else view.tp.prefix
        cache_key = (version_key, ns, name, view.writable)
        attrs = self._attr_cache.get(cache_key)
        if attrs is not None:
            return attrs
        self._start_prefetch(view, version_key, ns)
        found = self._locate(snap, ns, name)
        if found is None:
            return None
        kind, loc = found
        data = self._content(snap, kind, ns, name, loc)
        version = self._written_version(view, kind, ns, name, loc)
        attrs = self._file_attrs(len(data), self._time_ns(version), view.writable)
        self._attr_cache.put(cache_key, attrs)
        return attrs

    def _prefetch(self, view: _View, ns: str, names: list[str]) -> None:
        """Remember a listed namespace: when a tool then stats one of its files (ls -l,
        find, du, rsync), the others are read ahead by background threads (the size of a
        file is the length of its JSON, so each definition must be read once; reads
        overlap, which matters most on object stores). A plain `ls` reads nothing."""
        if self._pool is None or not names:
            return
        version_key = view.snapshot.version if view.history else view.tp.prefix
        self._listed.put((version_key, ns), (view, names))

    def _start_prefetch(self, view: _View, version_key: Any, ns: str) -> None:
        if self._pool is None:
            return
        listed = self._listed.pop((version_key, ns))
        if listed is None:
            return
        view, names = listed
        chunk = max(64, len(names) // (self.prefetch_threads * 4) + 1)

        def warm(part: list[str]) -> None:
            for name in part:
                try:
                    self._object_attrs(view, ns, name)
                except Exception:  # the request itself will report it
                    return

        for start in range(0, len(names), chunk):
            self._pool.submit(warm, names[start : start + chunk])

    # -- directories --------------------------------------------------------------------

    @_fuse_op(lookup=True)
    def opendir(self, path: str) -> int:
        view = self._view(path, fresh=True)
        attrs = self._attrs(view)
        if not stat.S_ISDIR(attrs["st_mode"]):
            raise _os_error(errno.ENOTDIR, "not a directory", path)
        return 0

    def releasedir(self, path: str, fh: int) -> int:
        return 0

    @_fuse_op(lookup=True)
    def readdir(self, path: str, fh: int) -> list:
        view = self._view(path, fresh=True)
        tp, snap = view.tp, view.snapshot
        dir_mode = stat.S_IFDIR | 0o755
        file_mode = stat.S_IFREG | 0o644
        entries: list = [(".", {"st_mode": dir_mode}, 0), ("..", {"st_mode": dir_mode}, 0)]
        if snap is None:  # /v: versions oldest first, latest, exports
            latest, _ = self._latest(fresh=True)
            try:
                exports = self._export_names()
            except TrinityError as exc:
                log.warning("cannot list exports: %s", exc)
                exports = []
            for name in versions_dir_names(self._oldest_version(), latest.version, exports):
                entries.append((encode_name(name), {"st_mode": dir_mode}, 0))
            return entries
        if tp.extra or tp.name is not None:
            raise _os_error(errno.ENOTDIR, "not a directory", path)
        if tp.is_root:
            for ns in self._iter_namespaces(snap):
                if tp.prefix == "" and ns == VERSIONS_DIR:
                    continue  # /v is the versions directory: reach it as /v/latest/v
                entries.append((encode_name(ns), {"st_mode": dir_mode}, 0))
            return entries
        ns = tp.namespace
        names = [ref.name for ref in snap.list_objects(ns)]
        self._prefetch(view, ns, names)
        if view.writable:
            with self._lock:
                hidden = {n for (s, n) in self._overlay.hidden if s == ns}
                extra = {n for (s, n) in self._overlay.scratch if s == ns}
                extra |= {
                    h.name
                    for h in self._handles.values()
                    if isinstance(h, _WriteHandle)
                    and h.namespace == ns
                    and not h.orphaned
                    and ((h.new and not h.committed) or h.name in hidden)
                }
            names = sorted((set(names) - hidden) | extra)
        entries.extend((encode_name(n), {"st_mode": file_mode}, 0) for n in names)
        return entries

    @staticmethod
    def _iter_namespaces(snap: CatalogSnapshot) -> Iterator[str]:
        after = None
        while True:
            page = snap.list_namespaces(after, 1000)
            yield from page
            if len(page) < 1000:
                return
            after = page[-1]

    def _writable_view(self, path: str) -> _View:
        view = self._view(path, fresh=True)
        if not view.writable:
            if self.read_only and view.tp.ref is not None and view.tp.ref.is_latest:
                why = "the mount is read-only"
            else:
                why = "old versions and exports are read-only (write to / or /v/latest)"
            raise _os_error(errno.EROFS, why, path)
        return view

    @_fuse_op()
    def mkdir(self, path: str, mode: int) -> int:
        view = self._writable_view(path)
        tp = view.tp
        if tp.is_root or tp.ref is None:
            raise _os_error(errno.EEXIST, "exists", path)
        if not tp.is_namespace:
            raise _os_error(errno.EPERM, "namespaces hold only tables and views (files)", path)
        self._commit(f"mkdir {tp.namespace}", lambda txn: txn.create_namespace(tp.namespace))
        return 0

    @_fuse_op()
    def rmdir(self, path: str) -> int:
        view = self._writable_view(path)
        tp = view.tp
        if not tp.is_namespace:
            if tp.is_root or tp.ref is None:
                raise _os_error(errno.EBUSY, "cannot remove a version root", path)
            raise _os_error(errno.ENOTDIR, "not a directory", path)
        with self._lock:
            held = [n for (s, n) in self._overlay.scratch if s == tp.namespace]
        if held:
            raise _os_error(
                errno.ENOTEMPTY, f"holds temporary file {held[0]!r} (in this mount)", path
            )
        self._commit(f"rmdir {tp.namespace}", lambda txn: txn.drop_namespace(tp.namespace))
        return 0

    # -- reading files ------------------------------------------------------------------

    def _new_fh(self, handle: Any) -> int:
        with self._lock:
            fh = self._next_fh
            self._next_fh += 1
            self._handles[fh] = handle
        return fh

    @_fuse_op(lookup=True)
    def open(self, path: str, flags: int) -> int:
        # reading: the cached latest snapshot, the one getattr showed (what a tool stat()s
        # is what it reads); writing: the latest, probed now, which the commit builds on
        mode = flags & os.O_ACCMODE
        view = self._view(path)
        tp = view.tp
        if tp.name is None or tp.extra or view.snapshot is None:
            if tp.extra:
                raise _os_error(errno.ENOENT, "no such file", path)
            raise _os_error(errno.EISDIR, "is a directory", path)
        if mode != os.O_RDONLY:
            view = self._writable_view(path)
        append = bool(flags & os.O_APPEND)
        truncate = bool(flags & os.O_TRUNC)
        if view.writable:
            with self._lock:
                scratch = self._overlay.scratch.get(view.key)
                hidden = view.key in self._overlay.hidden
            if scratch is not None:
                if truncate and mode != os.O_RDONLY:
                    scratch.data.clear()
                    scratch.touch()
                if mode == os.O_RDONLY:
                    return self._new_fh(_ReadHandle(bytes(scratch.data), None))
                return self._new_fh(_ScratchHandle(scratch, append))
            pending = self._pending(view.key, hidden)
            if hidden and pending is None:
                raise _os_error(errno.ENOENT, "no such file", path)
            if pending is not None:
                if mode == os.O_RDONLY:
                    return self._new_fh(_ReadHandle(bytes(pending.data), None))
                handle = _WriteHandle(
                    tp.namespace, tp.name, pending.base, bytearray(pending.data), pending.new
                )
                handle.append = append
                if truncate:
                    handle.data.clear()
                    handle.truncated = True
                return self._new_fh(handle)
        snap = view.snapshot
        found = self._locate(snap, tp.namespace, tp.name)
        if found is None:
            fresh = self._refresh(view)
            if fresh is not None:
                snap = fresh.snapshot
                found = self._locate(snap, tp.namespace, tp.name)
        if found is None:
            raise _os_error(errno.ENOENT, "no such table or view", path)
        kind, loc = found
        data = self._content(snap, kind, tp.namespace, tp.name, loc)
        if mode == os.O_RDONLY:
            return self._new_fh(_ReadHandle(data, snap.version))
        handle = _WriteHandle(
            tp.namespace, tp.name, snap.version, bytearray(b"" if truncate else data), False
        )
        handle.append = append
        handle.truncated = truncate and bool(data)
        return self._new_fh(handle)

    def _handle(self, fh: int) -> Any:
        with self._lock:
            handle = self._handles.get(fh)
        if handle is None:
            raise _os_error(errno.EBADF, "bad file handle")
        return handle

    @_fuse_op()
    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        handle = self._handle(fh)
        if isinstance(handle, _ScratchHandle):
            return bytes(handle.file.data[offset : offset + size])
        return bytes(handle.data[offset : offset + size])

    # -- writing files ------------------------------------------------------------------

    @_fuse_op()
    def create(self, path: str, mode: int, flags: int = 0) -> int:
        view = self._writable_view(path)
        tp = view.tp
        if tp.name is None or tp.extra:
            if tp.is_namespace:
                raise _os_error(
                    errno.EPERM, "the top level holds only namespaces (directories)", path
                )
            raise _os_error(errno.ENOENT, "no such directory", path)
        snap = view.snapshot
        if not snap.namespace_exists(tp.namespace):
            raise _os_error(errno.ENOENT, f"no namespace {tp.namespace!r}", path)
        exclusive = bool(flags & os.O_EXCL)
        append = bool(flags & os.O_APPEND)
        key = view.key
        with self._lock:
            scratch = self._overlay.scratch.get(key)
            hidden = key in self._overlay.hidden
        if scratch is not None:
            if exclusive:
                raise _os_error(errno.EEXIST, "exists", path)
            if flags & os.O_TRUNC:
                scratch.data.clear()
            scratch.touch()
            return self._new_fh(_ScratchHandle(scratch, append))
        found = None if hidden else self._locate(snap, tp.namespace, tp.name)
        pending = None if hidden else self._pending(key)
        if (found is not None or pending is not None) and exclusive:
            raise _os_error(errno.EEXIST, "exists", path)
        if found is None and pending is None and not hidden:
            if is_scratch_name(tp.name, self.scratch_patterns):
                file = ScratchFile(mode=mode & 0o777)
                with self._lock:
                    self._overlay.scratch[key] = file
                log.debug("temporary file %s kept in memory", path)
                return self._new_fh(_ScratchHandle(file, append))
            snap.object_location("table", tp.namespace, tp.name)  # InvalidNameError -> EINVAL
        if found is not None and not (flags & os.O_TRUNC):
            kind, loc = found
            data = bytearray(self._content(snap, kind, tp.namespace, tp.name, loc))
            handle = _WriteHandle(tp.namespace, tp.name, snap.version, data, False)
        else:
            # a new object, or a hidden one (`mv t t~` by an editor) being written again
            handle = _WriteHandle(
                tp.namespace, tp.name, snap.version, bytearray(), found is None and not hidden
            )
            handle.truncated = found is not None or hidden
        handle.append = append
        return self._new_fh(handle)

    @_fuse_op()
    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        handle = self._handle(fh)
        if isinstance(handle, _ReadHandle):
            raise _os_error(errno.EBADF, "file is open for reading", path)
        buf = handle.file.data if isinstance(handle, _ScratchHandle) else handle.data
        if handle.append:
            offset = len(buf)
        end = offset + len(data)
        if end > MAX_FILE_BYTES:
            raise _os_error(errno.EFBIG, f"a definition file is limited to {MAX_FILE_BYTES} bytes")
        if isinstance(handle, _WriteHandle):
            if handle.rejected:
                raise _os_error(errno.EINVAL, handle.rejected, path)
            handle.streaming = handle.streaming and offset == len(buf)
        if offset > len(buf):
            buf.extend(b"\0" * (offset - len(buf)))
        buf[offset:end] = data
        if isinstance(handle, _ScratchHandle):
            handle.file.touch()
            return len(data)
        handle.changed = True
        if handle.streaming and not fscontent.could_become_valid(buf):
            # written front to back (echo >, >>, cp, cat): the bytes so far can no longer
            # become a definition. Refuse the write itself, where the error reaches the
            # program (a shell's `echo x > f` never sees the error of its implicit close),
            # and never commit anything from this handle.
            handle.rejected = (
                f"not a definition: {path} must hold one JSON object "
                '{"kind": "table" or "view", "definition": {...}}; nothing was written'
            )
            handle.changed = False
            handle.failed = True
            log.warning("write %s: %s", path, handle.rejected)
            raise _os_error(errno.EINVAL, handle.rejected, path)
        return len(data)

    @_fuse_op()
    def truncate(self, path: str | None, length: int, fh: int | None = None) -> int:
        if length > MAX_FILE_BYTES:
            raise _os_error(errno.EFBIG, f"a definition file is limited to {MAX_FILE_BYTES} bytes")
        targets: list[Any] = []
        if fh:
            targets.append(self._handle(fh))
        else:
            view = self._writable_view(path)
            with self._lock:
                scratch = self._overlay.scratch.get(view.key)
                if scratch is not None:
                    targets.append(_ScratchHandle(scratch))
                else:
                    targets.extend(
                        h
                        for h in self._handles.values()
                        if isinstance(h, _WriteHandle) and h.key == view.key and not h.orphaned
                    )
            if not targets:  # `truncate -s` on a file nobody has open: one commit now
                tp = view.tp
                if tp.name is None or tp.extra:
                    raise _os_error(errno.EISDIR, "is a directory", path)
                found = self._locate(view.snapshot, tp.namespace, tp.name)
                if found is None:
                    raise _os_error(errno.ENOENT, "no such table or view", path)
                kind, loc = found
                data = bytearray(self._content(view.snapshot, kind, tp.namespace, tp.name, loc))
                handle = _WriteHandle(tp.namespace, tp.name, view.snapshot.version, data, False)
                self._resize(handle.data, length)
                handle.changed = True
                self._commit_handle(handle, path)
                return 0
        for handle in targets:
            if isinstance(handle, _ReadHandle):
                raise _os_error(errno.EBADF, "file is open for reading", path)
            if isinstance(handle, _ScratchHandle):
                self._resize(handle.file.data, length)
                handle.file.touch()
            elif len(handle.data) != length:  # (O_TRUNC then ftruncate(0): nothing new)
                self._resize(handle.data, length)
                if length == 0 and not handle.changed:
                    # `> file` through libfuse 2 (open, then truncate): like O_TRUNC, the
                    # emptying is committed at release unless something is written; a
                    # flush in between (the shell closing a dup) must not commit it
                    handle.truncated = True
                else:
                    handle.changed = True
        return 0

    @staticmethod
    def _resize(buf: bytearray, length: int) -> None:
        if length < len(buf):
            del buf[length:]
        else:
            buf.extend(b"\0" * (length - len(buf)))

    @_fuse_op()
    def flush(self, path: str, fh: int) -> int:
        handle = self._handle(fh)
        if isinstance(handle, _WriteHandle) and handle.rejected:
            raise _os_error(errno.EINVAL, handle.rejected, path)
        if isinstance(handle, _WriteHandle) and handle.changed:
            self._commit_handle(handle, path)
        return 0

    @_fuse_op()
    def fsync(self, path: str, datasync: int, fh: int) -> int:
        return self.flush(path, fh)

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        with self._lock:
            handle = self._handles.pop(fh, None)
        if not isinstance(handle, _WriteHandle):
            return 0
        due = handle.changed or (
            (handle.new or handle.truncated) and not handle.committed and not handle.failed
        )
        if due and not handle.orphaned and not handle.rejected:
            try:  # close() has returned already: an error here can only be logged
                self._commit_handle(handle, path or _path_of(handle.namespace, handle.name))
            except Exception as exc:
                log.warning(
                    "%s/%s: not committed at release: %s",
                    handle.namespace,
                    handle.name,
                    message_of(exc),
                )
        return 0

    def _commit_handle(self, handle: _WriteHandle, path: str) -> None:
        """Commit a written file as one version (or nothing when it is unchanged)."""
        if handle.orphaned:
            return
        data = bytes(handle.data)
        handle.changed = False
        try:
            parsed = fscontent.parse(data, path)
        except ValueError:
            handle.failed = True
            raise
        ns, name = handle.namespace, handle.name
        try:
            version = self._commit(
                f"write {ns}/{name}",
                lambda txn: self._apply_content(txn, ns, name, parsed),
                base=handle.base,
            )
        except Exception:
            handle.failed = True
            raise
        handle.failed = False
        handle.committed = True
        if version is not None:
            handle.base = version
            handle.version = version
        with self._lock:
            self._unhide(handle.key)

    @staticmethod
    def _apply_content(txn: Any, ns: str, name: str, parsed: fscontent.Content) -> bool:
        """Create, replace (or re-kind) `ns.name` from parsed content; False if unchanged."""
        existing = txn.object_kind(ns, name)
        kind = parsed.kind or existing or "table"
        msg = fscontent.to_message(kind, parsed.definition)
        if existing == kind:
            current = txn.describe(kind, ns, name)
            if not msg.id:
                msg.id = current.id
            if current == msg:
                return False
            txn.replace(kind, ns, name, msg)
        elif existing is None:
            txn.create(kind, ns, name, msg)
        else:
            txn.drop(existing, ns, name)
            txn.create(kind, ns, name, msg)
        return True

    def _commit(
        self, what: str, apply: Callable[[Any], Any], base: int | None = None
    ) -> int | None:
        """Run `apply` in one catalog transaction and commit it; None if nothing changed.

        With `base`, the transaction starts at that version, so a concurrent change of
        anything it writes is a conflict (EBUSY) rather than a lost update.
        """
        with self._commit_lock:
            txn = self.lake.transaction(version=base)
            try:
                changed = apply(txn)
                if changed is False:
                    txn.abort()
                    return None
                version = txn.commit()
            except BaseException:
                txn.abort()
                raise
        self._invalidate_latest()
        log.info("version %d: %s", version, what)
        return version

    # -- removing and renaming -----------------------------------------------------------

    def _unhide(self, key: tuple[str, str]) -> None:
        """`key` was written again: it is visible, and its backup no longer owns it."""
        target = self._overlay.hidden.pop(key, None)
        if target is not None:
            backup = self._overlay.scratch.get(target)
            if backup is not None:
                backup.origin = None

    def _orphan(self, key: tuple[str, str]) -> None:
        with self._lock:
            for h in self._handles.values():
                if isinstance(h, _WriteHandle) and h.key == key:
                    h.orphaned = True

    def _retarget(self, old: tuple[str, str], new: tuple[str, str]) -> None:
        with self._lock:
            for h in self._handles.values():
                if isinstance(h, _WriteHandle) and h.key == old:
                    h.namespace, h.name = new

    @_fuse_op()
    def unlink(self, path: str) -> int:
        view = self._writable_view(path)
        tp = view.tp
        if tp.name is None:
            raise _os_error(errno.EISDIR, "is a directory", path)
        if tp.extra:
            raise _os_error(errno.ENOENT, "no such file", path)
        key = view.key
        with self._lock:
            scratch = self._overlay.scratch.pop(key, None)
            hidden = key in self._overlay.hidden
        if scratch is not None:
            origin = scratch.origin
            if origin is not None:  # `mv t t~; rm t~`: t goes away now (one commit)
                with self._lock:
                    okey = next((k for k, v in self._overlay.hidden.items() if v == key), None)
                if okey is not None:
                    try:
                        self._commit(
                            f"rm {okey[0]}/{okey[1]}",
                            lambda txn: txn.drop(origin.kind, *okey),
                            base=origin.base_version,
                        )
                    except BaseException:
                        with self._lock:
                            self._overlay.scratch[key] = scratch
                        raise
                    with self._lock:
                        self._overlay.hidden.pop(okey, None)
                    self._orphan(okey)
            return 0
        if hidden:
            raise _os_error(errno.ENOENT, "no such file", path)
        pending = self._pending(key)
        found = self._locate(view.snapshot, tp.namespace, tp.name)
        if found is None:
            if pending is not None:
                self._orphan(key)
                return 0
            raise _os_error(errno.ENOENT, "no such table or view", path)
        kind, _ = found
        self._commit(f"rm {tp.namespace}/{tp.name}", lambda txn: txn.drop(kind, *key))
        self._orphan(key)
        return 0

    @_fuse_op()
    def rename(self, old: str, new: str) -> int:
        src = self._writable_view(old)
        dst = self._writable_view(new)
        if src.tp.is_namespace or dst.tp.is_namespace:
            if not (src.tp.is_namespace and dst.tp.is_namespace):
                if src.tp.is_namespace:
                    raise _os_error(errno.ENOTDIR, "a namespace stays at the top level", new)
                raise _os_error(errno.EPERM, "the top level holds only namespaces", new)
            self._rename_namespace(src, dst)
            return 0
        for view in (src, dst):
            if view.tp.name is None or view.tp.extra:
                raise _os_error(errno.EPERM, "cannot rename a version root", view.tp.path)
        skey, dkey = src.key, dst.key
        if skey == dkey:
            return 0
        snap = src.snapshot
        with self._lock:
            scratch = self._overlay.scratch.get(skey)
            src_hidden = skey in self._overlay.hidden
            dst_hidden = dkey in self._overlay.hidden
            dst_scratch = self._overlay.scratch.get(dkey)
        if src_hidden and scratch is None:
            raise _os_error(errno.ENOENT, "no such file", old)
        if not snap.namespace_exists(dst.tp.namespace):
            raise _os_error(errno.ENOENT, f"no namespace {dst.tp.namespace!r}", new)
        dst_found = None if dst_hidden else self._locate(snap, *dkey)
        dst_is_scratch = dst_scratch is not None or (
            dst_found is None
            and not dst_hidden
            and is_scratch_name(dst.tp.name, self.scratch_patterns)
        )
        if scratch is not None:
            if dst_is_scratch:  # temp -> temp: in memory
                with self._lock:
                    self._overlay.scratch[dkey] = self._overlay.scratch.pop(skey)
                    for k, v in list(self._overlay.hidden.items()):
                        if v == skey:
                            self._overlay.hidden[k] = dkey
                return 0
            # temp -> real name: the editor's save. Parse, then one commit.
            parsed = fscontent.parse(bytes(scratch.data), new)
            origin = scratch.origin
            restoring = (
                origin is not None
                and dst_hidden
                and self._overlay.hidden.get(dkey) == skey
                and dst_found is None
            )
            self._commit(
                f"save {dkey[0]}/{dkey[1]}",
                lambda txn: self._apply_content(txn, *dkey, parsed),
                base=origin.base_version if restoring else None,
            )
            with self._lock:
                self._overlay.scratch.pop(skey, None)
                self._unhide(dkey)
            self._orphan(dkey)
            return 0
        pending = self._pending(skey)
        src_found = self._locate(snap, *skey)
        if src_found is None:
            if pending is not None:  # renamed before its first commit: follows the handle
                self._retarget(skey, dkey)
                return 0
            raise _os_error(errno.ENOENT, "no such table or view", old)
        kind, loc = src_found
        if dst_is_scratch:  # real -> temp (`mv t t~`): hide t, keep its bytes as the backup
            data = self._content(snap, kind, *skey, loc)
            backup = ScratchFile(bytearray(data), origin=Origin(kind, loc, snap.version))
            with self._lock:
                self._overlay.scratch[dkey] = backup
                self._overlay.hidden[skey] = dkey
            log.info("%s hidden in this mount until it is written again (%s)", old, new)
            return 0

        def move(txn: Any) -> None:
            other = txn.object_kind(*dkey)
            if other is not None:
                txn.drop(other, *dkey)
            txn.rename(kind, *skey, *dkey)

        self._commit(f"mv {skey[0]}/{skey[1]} {dkey[0]}/{dkey[1]}", move)
        with self._lock:
            self._unhide(dkey)
        self._orphan(dkey)
        self._retarget(skey, dkey)
        return 0

    def _rename_namespace(self, src: _View, dst: _View) -> None:
        old, new = src.tp.namespace, dst.tp.namespace
        if old == new:
            return
        with self._lock:
            if any(s == old for (s, _) in self._overlay.scratch):
                raise _os_error(errno.EBUSY, "holds temporary files of this mount", src.tp.path)

        def move(txn: Any) -> None:
            if txn.namespace_exists(new):
                txn.drop_namespace(new)  # only an empty one: NamespaceNotEmpty -> ENOTEMPTY
            move_namespace(txn, old, new)  # the same move as trinity://: ids kept

        self._commit(f"mv {old} {new}", move)

    # -- metadata that has no catalog meaning ---------------------------------------------

    def _settable(self, path: str) -> _View:
        view = self._writable_view(path)
        self._attrs(view)  # ENOENT for a missing path
        return view

    @_fuse_op()
    def chmod(self, path: str, mode: int) -> int:
        """Only temporary files have a mode of their own. A table, view or namespace
        shows the mode of what the mount allows (0644/0755 read-write, 0444/0555
        read-only): asking for that mode is a no-op, any other one is refused (EPERM),
        never silently ignored (the catalog has no per-object permissions)."""
        view = self._settable(path)
        with self._lock:
            scratch = self._overlay.scratch.get(view.key)
        if scratch is not None:
            scratch.mode = mode & 0o777
            return 0
        current = stat.S_IMODE(self._attrs(view)["st_mode"])
        if stat.S_IMODE(mode) != current:
            raise _os_error(
                errno.EPERM,
                f"the catalog has no per-object permissions: modes are fixed at {current:o}",
                path,
            )
        return 0

    @_fuse_op()
    def chown(self, path: str, uid: int, gid: int) -> int:
        """Owners are the mount's (uid=/gid= options): changing them is refused (EPERM)."""
        self._settable(path)
        unchanged = (-1, 0xFFFFFFFF)
        if (uid not in unchanged and uid != self.uid) or (gid not in unchanged and gid != self.gid):
            raise _os_error(
                errno.EPERM, "the catalog has no owners: every entry belongs to the mount", path
            )
        return 0

    @_fuse_op()
    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        view = self._settable(path)
        with self._lock:
            scratch = self._overlay.scratch.get(view.key)
        if scratch is not None:
            scratch.mtime_ns = times[1] if times else time.time_ns()
            return 0
        pending = self._pending(view.key) if view.tp.name else None
        if pending is not None:  # `touch new`: create it before touch exits
            pending.changed = True
        return 0  # file times are commit times

    # -- namespace properties as user.* extended attributes ---------------------------------

    def _xattr_view(self, path: str, write: bool = False) -> tuple[_View, bool]:
        """The view of a path, and whether it is a namespace (which has properties)."""
        view = self._writable_view(path) if write else self._view(path)
        attrs = self._attrs(view)
        return view, stat.S_ISDIR(attrs["st_mode"]) and view.tp.is_namespace

    @_fuse_op(lookup=True)
    def listxattr(self, path: str) -> list[str]:
        view, is_ns = self._xattr_view(path)
        if not is_ns:
            return []
        props = view.snapshot.namespace_properties(view.tp.namespace)
        return [XATTR_PREFIX + k for k in sorted(props)]

    @_fuse_op(lookup=True)
    def getxattr(self, path: str, name: str, position: int = 0) -> bytes:
        if not name.startswith(XATTR_PREFIX):
            # ENOTSUP (not ENODATA) for security.*, system.posix_acl_*, ...: ls -l then
            # remembers the filesystem has none, instead of asking for every file
            raise _os_error(errno.ENOTSUP, "only user.* attributes (namespace properties)", path)
        view, is_ns = self._xattr_view(path)
        if not is_ns:
            raise _os_error(ENOATTR, "no such attribute", path)
        props = view.snapshot.namespace_properties(view.tp.namespace)
        key = name[len(XATTR_PREFIX) :]
        if key not in props:
            raise _os_error(ENOATTR, "no such attribute", path)
        return props[key].encode("utf-8")

    @_fuse_op()
    def setxattr(self, path: str, name: str, value: bytes, options: int, position: int = 0) -> int:
        if not name.startswith(XATTR_PREFIX):
            raise _os_error(errno.ENOTSUP, "only user.* attributes (namespace properties)", path)
        view, is_ns = self._xattr_view(path, write=True)
        if not is_ns:
            raise _os_error(errno.ENOTSUP, "only namespaces have properties", path)
        key = name[len(XATTR_PREFIX) :]
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise _os_error(errno.EINVAL, "property values are UTF-8 text", path) from None
        ns = view.tp.namespace

        def update(txn: Any) -> bool:
            props = txn.namespace_properties(ns)
            if options & XATTR_CREATE and key in props:
                raise _os_error(errno.EEXIST, f"property {key!r} exists", path)
            if options & XATTR_REPLACE and key not in props:
                raise _os_error(ENOATTR, f"no property {key!r}", path)
            if props.get(key) == text:
                return False
            txn.set_namespace_properties(ns, {key: text})
            return True

        self._commit(f"setxattr {ns} {name}", update)
        return 0

    @_fuse_op()
    def removexattr(self, path: str, name: str) -> int:
        if not name.startswith(XATTR_PREFIX):
            raise _os_error(errno.ENOTSUP, "only user.* attributes (namespace properties)", path)
        view, is_ns = self._xattr_view(path, write=True)
        if not is_ns:
            raise _os_error(ENOATTR, "no such attribute", path)
        key = name[len(XATTR_PREFIX) :]
        ns = view.tp.namespace

        def remove(txn: Any) -> None:
            if key not in txn.namespace_properties(ns):
                raise _os_error(ENOATTR, f"no property {key!r}", path)
            txn.set_namespace_properties(ns, None, [key])

        self._commit(f"removexattr {ns} {name}", remove)
        return 0

    # -- the filesystem -----------------------------------------------------------------

    @_fuse_op(lookup=True)
    def statfs(self, path: str) -> dict[str, int]:
        snap, _ = self._latest()
        ldef = snap.lakehouse_def
        free = 1 << 30
        return {
            "f_bsize": BLOCK,
            "f_frsize": BLOCK,
            "f_blocks": free,
            "f_bfree": free,
            "f_bavail": free,
            "f_files": free,
            "f_ffree": free,
            "f_favail": free,
            "f_namemax": max(ldef.table_name_max_size_bytes, ldef.view_name_max_size_bytes, 255),
        }


__all__ = ["TrinityOperations"]
