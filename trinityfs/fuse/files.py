"""FUSE file operations: open, read, create, write (checked as it streams), truncate,
flush/fsync/release, and the commit of a written file on top of the version it was
opened at. A mixin of `TrinityOperations` (trinityfs.fuse.operations)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Hashable
from typing import Any

from trinityfs.catalog import Content
from trinityfs.fs import content as fscontent
from trinityfs.fs.errors import message_of
from trinityfs.fuse.common import (
    MAX_FILE_BYTES,
    _fuse_op,
    _os_error,
    _path_of,
    _ReadHandle,
    _ScratchHandle,
    _WriteHandle,
    log,
)
from trinityfs.fuse.scratch import ScratchFile, is_scratch_name


class FileOpsMixin:
    """Reading and writing files (see the module docstring)."""

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
        # is what it reads). Writing an existing table: its commit is based on that same
        # snapshot when it holds the table, so a change made since (another process's,
        # within latest_ttl) is a conflict, not overwritten by content read before it
        # (read-modify-write: `vim -c wq` right after an API replace lost the replace).
        mode = flags & os.O_ACCMODE
        view = self._view(path)
        shown = view.snapshot
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
        older = mode != os.O_RDONLY and shown is not None and shown.version < snap.version
        if older and self._locate(shown, tp.namespace, tp.name) is not None:
            snap = shown
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
            if not view.writable:
                return self._new_fh(_ReadHandle(data, snap.version))
            # what a read through it shows is the base of the reader's later writes
            return self._new_fh(_ReadHandle(data, snap.version, view.key, loc))
        handle = _WriteHandle(
            tp.namespace, tp.name, snap.version, bytearray(b"" if truncate else data), False
        )
        handle.append = append
        handle.truncated = truncate and bool(data)
        handle.process = self._process()
        handle.stale = self._stale(handle.process, view.key, loc)
        if mode == os.O_RDWR and not truncate:  # `r+`: a read through it shows `loc`
            handle.readable_location = loc
        return self._new_fh(handle)

    def _process(self) -> Hashable | None:
        """The process making the running request (served.py), or None if unknown."""
        try:
            return None if self.caller is None else self.caller()
        except Exception:  # a process gone meanwhile: unknown
            return None

    def _stale(
        self, process: Hashable | None, key: tuple[str, str], location: str | None
    ) -> str | None:
        """Why a write by `process` would overwrite a change of `key` it was never shown
        (the object is stored at `location` now, None if it is gone), or None."""
        seen = self._served.get(process, key)
        if seen is None or seen.location == location:
            return None
        what = "dropped" if location is None else "changed"
        return (
            f"{_path_of(*key)} was {what} by another writer after this process read it "
            f"(at version {seen.version}); nothing was written: read it again"
        )

    def _served_commit(self, process: Hashable | None, key: tuple[str, str], version: int) -> None:
        """`process` committed `key` as `version`. If it had read `key` (an editor saving
        what it read), its next save builds on this one; a process that only writes
        (never read it) is not recorded: its writes stay based on what the mount shows."""
        if self._served.get(process, key) is None:
            return
        found = self._locate(self._at(version), *key)
        if found is not None:
            self._served.record(process, key, found[1], version)

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
        if isinstance(handle, _ReadHandle):
            if handle.location is not None:  # the first read: the reader was shown it
                location, handle.location = handle.location, None
                self._served.record(self._process(), handle.key, location, handle.version)
        elif handle.readable_location is not None:
            location, handle.readable_location = handle.readable_location, None
            if not handle.changed:  # read before writing: the writer has seen it now
                self._served.record(self._process(), handle.key, location, handle.base)
                handle.stale = None
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
        handle.process = self._process()
        stored = found if not hidden else self._locate(snap, tp.namespace, tp.name)
        handle.stale = self._stale(handle.process, key, None if stored is None else stored[1])
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
        handle.set_times = None  # written after `touch -d`: the commit's time
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
                handle.process = self._process()
                handle.stale = self._stale(handle.process, view.key, loc)
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
        if isinstance(handle, _WriteHandle) and (
            handle.changed or (self._emptied_due(handle) and not self._held_elsewhere(path))
        ):
            self._commit_handle(handle, path)
        return 0

    @staticmethod
    def _emptied_due(handle: _WriteHandle) -> bool:
        """Created or emptied (O_TRUNC, ftruncate to 0) and not written: a commit is due."""
        return (
            (handle.new or handle.truncated)
            and not handle.committed
            and not handle.failed
            and not handle.orphaned
        )

    def _held_elsewhere(self, path: str) -> bool:
        """Whether the process closing a descriptor of `path` still holds another one (a
        shell's `> file` closes a dup before the command writes: that flush must not
        commit the emptied file). Without a kernel behind the calls: always (the commit
        is left to the release)."""
        check = self.held_elsewhere
        return True if check is None else check(path)

    @_fuse_op()
    def fsync(self, path: str, datasync: int, fh: int) -> int:
        handle = self._handle(fh)
        if isinstance(handle, _WriteHandle) and not handle.rejected and self._emptied_due(handle):
            # asked to make it durable: an emptied or created file commits now, even
            # while a dup is open (flush leaves that to the last close)
            self._commit_handle(handle, path)
            return 0
        return self.flush(path, fh)

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        with self._lock:
            handle = self._handles.pop(fh, None)
        if not isinstance(handle, _WriteHandle):
            return 0
        due = handle.changed or self._emptied_due(handle)
        if due and not handle.orphaned and not handle.rejected:
            # close() has returned already: an error here can only be logged (the last
            # flush commits an emptied file unless the closing process held a dup)
            try:
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
            parsed = self.model.parse(data, path)
        except ValueError:
            handle.failed = True
            raise
        if handle.stale:
            handle.failed = True
            log.warning("write %s: %s", path, handle.stale)
            raise _os_error(errno.EBUSY, handle.stale, path)
        ns, name = handle.namespace, handle.name
        compared: list[str | None] = []
        try:
            version = self._commit(
                f"write {ns}/{name}",
                lambda txn: self._apply_content(txn, ns, name, parsed, compared),
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
            self._served_commit(handle.process, handle.key, version)
        with self._lock:
            self._unhide(handle.key)
        self._saved_with_times(handle.key, handle.set_times, compared)

    def _apply_content(
        self,
        txn: Any,
        ns: str,
        name: str,
        parsed: Content,
        compared: list[str | None] | None = None,
    ) -> bool:
        """Create, replace (or re-kind) `ns.name` from parsed content (the path model's
        write: ids kept); False if unchanged. `compared` gets the definition location the
        transaction holds after the write (for an unchanged one: what it was compared with)."""
        changed = self.model.write(txn, ns, name, parsed).action != "unchanged"
        if compared is not None:
            found = txn.locate(ns, name)
            compared.append(None if found is None else found[1])
        return changed

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
                txn.discard()  # a commit that landed stands; its exception propagates
                raise
        self._invalidate_latest()
        log.info("version %d: %s", version, what)
        return version


__all__ = ["FileOpsMixin"]
