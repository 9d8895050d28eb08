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
import os
import stat
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from typing import Any

from trinityfs.catalog import CatalogSnapshot, Lakehouse
from trinityfs.catalog.paths import PathModel
from trinityfs.errors import TrinityError
from trinityfs.fs.paths import VERSIONS_DIR, encode_name, parse_path
from trinityfs.fs.reading import encoded_names
from trinityfs.fuse.common import (
    BLOCK,
    MILLIS_NS,
    _fuse_op,
    _os_error,
    _Overlay,
    _ScratchHandle,
    _View,
    _WriteHandle,
    log,
)
from trinityfs.fuse.entries import EntryOpsMixin
from trinityfs.fuse.files import FileOpsMixin
from trinityfs.fuse.scratch import DEFAULT_PATTERNS
from trinityfs.fuse.served import ServedMemory
from trinityfs.fuse.times import SetTimes
from trinityfs.lru import LRU


class TrinityOperations(FileOpsMixin, EntryOpsMixin):
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
        held_elsewhere: Callable[[str], bool] | None = None,
        caller: Callable[[], Hashable | None] | None = None,
    ):
        self.lake = lake
        self.pinned = version
        self.read_only = read_only or version is not None
        self.latest_ttl = latest_ttl
        self.scratch_patterns = scratch_patterns
        self.uid = os.getuid() if uid is None else uid
        self.gid = os.getgid() if gid is None else gid
        self.on_init = on_init
        # whether the process closing a descriptor of a path holds another (files.py)
        self.held_elsewhere = held_elsewhere
        # the process making the running request (served.py), None when unknown
        self.caller = caller
        self._served = ServedMemory()
        self._times = SetTimes()  # times set by utimens (times.py)
        self._lock = threading.RLock()  # overlay, handles, latest cache
        self._commit_lock = threading.Lock()  # this mount's commits, one at a time
        self._latest_snap: CatalogSnapshot | None = None
        self._latest_checked = 0.0
        # what a path means (selectors, reads, writes, history): shared with trinity://;
        # exports and time labels are re-resolved at most every latest_ttl (>= 1) seconds
        self.model = PathModel(lake, label_ttl=max(latest_ttl, 1.0), snapshots=128)
        self._attr_cache: LRU[tuple, dict[str, Any]] = LRU(100_000)  # (version, ns, name, rw)
        self._listed: LRU[tuple, tuple[_View, list[str]]] = LRU(64)  # not prefetched yet
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
        return self.model.snapshot(version)

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
        selection, snap = self.model.select(ref.text)  # the catalog's one precedence
        return _View(tp, snap, history=selection.export is None, selection=selection)

    def _refresh(self, view: _View) -> _View | None:
        """The same path at a freshly probed latest version, if the view could be stale."""
        if view.tp.ref is None or not view.tp.ref.is_latest or view.fresh:
            return None
        if view.tp.prefix == "" and self.pinned is not None:
            return None
        fresh = self._view(view.tp.path, fresh=True)
        return fresh if fresh.snapshot.version != view.snapshot.version else None

    # -- catalog lookups ------------------------------------------------------------

    def _locate(self, snap: CatalogSnapshot, namespace: str, name: str) -> tuple[str, str] | None:
        """(kind, definition location) of a table or view, or None."""
        return self.model.locate(_View.at(snap).place_of(namespace, name))

    def _content(self, snap: CatalogSnapshot, kind: str, ns: str, name: str, loc: str) -> bytes:
        return self.model.render(snap, kind, ns, name, loc)  # type: ignore[arg-type]

    def _changed_ns(self, view: _View, ns: str, name: str | None = None) -> int:
        """When namespace `ns` (or its object `name`) took effect at the view's version
        (the catalog's history, by bisection over versions), in ns; an export's
        objects show the export's time."""
        info = self.model.changed(view.place_of(ns, name)) if view.history else None
        if info is None:
            return self._time_ns(view.snapshot.version)
        return info.created_at_millis * MILLIS_NS

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
            attrs = self._dir_attrs(self._changed_ns(view, ns), view.writable)
            return self._with_set_times(view, attrs)
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
        return self._with_set_times(view, attrs)

    def _with_set_times(self, view: _View, attrs: dict[str, Any]) -> dict[str, Any]:
        """`attrs` with the times set through this mount on the entry's current
        definition, if any (times.py); else as they are (commit times)."""
        if not view.writable or self._times.location(view.key) is None:
            return attrs
        times = self._times.get(view.key, self.model.location(view.place))
        if times is None:
            return attrs
        return {**attrs, "st_atime": times[0], "st_mtime": times[1]}

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
        attrs = self._file_attrs(len(data), self._changed_ns(view, ns, name), view.writable)
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
        if snap is None:  # /v: the catalog's selectors (versions, latest, exports)
            for entry in self.model.versions():
                entries.append((encode_name(entry.selector), {"st_mode": dir_mode}, 0))
            return entries
        if tp.extra or tp.name is not None:
            raise _os_error(errno.ENOTDIR, "not a directory", path)
        if tp.is_root:
            for ns in self.model.namespaces(view.place):
                if tp.prefix == "" and ns == VERSIONS_DIR:
                    continue  # /v is the versions directory: reach it as /v/latest/v
                entries.append((encode_name(ns), {"st_mode": dir_mode}, 0))
            return entries
        ns = tp.namespace
        # by name, as two columns (no ObjectRef per name); of one kind, no name is twice
        names, kinds = self.model.object_names(view.place)
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
            if hidden or extra or kinds.count(kinds[0] if kinds else "") != len(kinds):
                names = sorted((set(names) - hidden) | extra)
        file_attrs = {"st_mode": file_mode}  # read only by the binding: one for all
        entries.extend(zip(encoded_names(names), repeat(file_attrs), repeat(0)))
        return entries

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


__all__ = ["TrinityOperations"]
