"""FUSE operations that change entries and their metadata: unlink, rename (tables,
views, editors' temporary files, namespaces through the shared `move_namespace`), honest
chmod/chown/utimens, namespace properties as `user.*` xattrs, statfs.
A mixin of `TrinityOperations` (trinityfs.fuse.operations)."""

from __future__ import annotations

import errno
import stat
from typing import Any

from trinityfs.fs.errors import namespace_not_movable_to
from trinityfs.fuse.common import (
    BLOCK,
    ENOATTR,
    XATTR_CREATE,
    XATTR_PREFIX,
    XATTR_REPLACE,
    _fuse_op,
    _os_error,
    _View,
    _WriteHandle,
    log,
)
from trinityfs.fuse.scratch import Origin, ScratchFile, is_scratch_name
from trinityfs.fuse.times import requested


class EntryOpsMixin:
    """Removing, renaming and metadata (see the module docstring)."""

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
        self._commit(f"rm {tp.namespace}/{tp.name}", lambda txn: self.model.remove(txn, *key))
        self._served.forget(self._process(), key)  # its own removal is no change unseen
        self._orphan(key)
        return 0

    @_fuse_op()
    def rename(self, old: str, new: str) -> int:
        src = self._writable_view(old)
        dst = self._writable_view(new)
        if src.tp.is_namespace or dst.tp.is_namespace:
            if not (src.tp.is_namespace and dst.tp.is_namespace):
                if src.tp.is_namespace and dst.tp.is_object and dst.snapshot is not None:
                    # trinity:// answers the same (fs/errors.namespace_not_movable_to)
                    taken = self._locate(dst.snapshot, *dst.key) is not None
                    raise namespace_not_movable_to(new, taken)
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
            parsed = self.model.parse(bytes(scratch.data), new)
            origin = scratch.origin
            restoring = (
                origin is not None
                and dst_hidden
                and self._overlay.hidden.get(dkey) == skey
                and dst_found is None
            )
            process = self._process()
            if not restoring:  # a save (not a backup put back): what did its writer see?
                stored = self._locate(snap, *dkey)
                stale = self._stale(process, dkey, None if stored is None else stored[1])
                if stale:
                    log.warning("rename %s %s: %s", old, new, stale)
                    raise _os_error(errno.EBUSY, stale, new)
            compared: list[str | None] = []
            version = self._commit(
                f"save {dkey[0]}/{dkey[1]}",
                lambda txn: self._apply_content(txn, *dkey, parsed, compared),
                base=origin.base_version if restoring else None,
            )
            with self._lock:
                self._overlay.scratch.pop(skey, None)
                self._unhide(dkey)
            self._orphan(dkey)
            if version is not None:
                self._served_commit(process, dkey, version)
            self._saved_with_times(dkey, scratch.set_times, compared)
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

        self._commit(
            f"mv {skey[0]}/{skey[1]} {dkey[0]}/{dkey[1]}",
            lambda txn: self.model.move(txn, skey, dkey),  # id kept; dkey replaced
        )
        process = self._process()
        for key in (skey, dkey):  # moved by this process: no change it did not see
            self._served.forget(process, key)
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

        # the same move as trinity://: ids and properties kept; like rename(2), an
        # existing empty target is replaced (NamespaceNotEmptyError -> ENOTEMPTY)
        self._commit(
            f"mv {old} {new}",
            lambda txn: self.model.move_namespace(txn, old, new, over_empty=True),
        )

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
        """Times set on a table, view or namespace are shown while it keeps its current
        definition, in this mount (times.py); any committed change shows its commit
        time again. A temporary file keeps them, and gives them to the object it is
        renamed onto (rsync sets them before that rename)."""
        view = self._settable(path)
        with self._lock:
            scratch = self._overlay.scratch.get(view.key)
        if scratch is not None:
            current = (scratch.mtime_ns, scratch.mtime_ns)
            scratch.set_times = requested(times, scratch.set_times or current)
            scratch.mtime_ns = scratch.set_times[1]
            return 0
        tp = view.tp
        if not (tp.is_namespace or tp.is_object):
            return 0  # the root and /v show version times
        attrs = self._attrs(view)
        asked = requested(times, (attrs["st_atime"], attrs["st_mtime"]))
        if tp.is_object:
            # a file being written (`cp -p`, `touch new`): its commit gets the times
            for h in self._writers(view.key):
                if h.new and not h.committed:  # `touch new`: create it before touch exits
                    h.changed = True
                h.set_times = asked
        location = self.model.location(view.place)
        if location is not None:
            self._times.set(view.key, location, *asked)
        return 0

    def _writers(self, key: tuple[str, str]) -> list[_WriteHandle]:
        """Open handles writing `key` (not orphaned)."""
        with self._lock:
            return [
                h
                for h in self._handles.values()
                if isinstance(h, _WriteHandle) and h.key == key and not h.orphaned
            ]

    def _saved_with_times(
        self,
        key: tuple[str, str],
        times: tuple[int, int] | None,
        compared: list[str | None],
    ) -> None:
        """`key` was just saved by a writer that set `times`: show them on the definition
        that save left, never on a later writer's: the location its transaction held after
        the write (`compared`: the one it wrote, or for unchanged content the one it was
        compared with). Nothing is read back: the save has landed, and its version may
        be expired already (a close must not fail after its commit)."""
        location = compared[-1] if compared else None
        if times is not None and location is not None:
            self._times.set(key, location, *times)

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
            return self.model.set_properties(txn, ns, {key: text})

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
            self.model.set_properties(txn, ns, None, [key])

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


__all__ = ["EntryOpsMixin"]
