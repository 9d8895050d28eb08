"""`TrinityFileSystem`: a TrinityLake catalog as an fsspec filesystem (protocol "trinity").

Namespaces are directories, tables and views are files whose content is their definition
as stable JSON (see `trinityfs.fs.content`), and old versions are read-only directories
under `/v` (see `trinityfs.fs.paths` for the grammar). Every change is a catalog
transaction: each closed file, `pipe`, `rm`, `mkdir`, `rmdir`, `mv`, `cp`, `put` is one
commit, and `with fs.transaction:` makes everything inside it one commit.

Options: `root` (the lakehouse URL: a local directory, memory://..., s3://...; default
from fsspec's config / FSSPEC_TRINITY_ROOT, then TRINITYFS_ROOT, then ./lakehouse),
`storage_options` (passed to the store, e.g. S3 endpoint and keys), `create` (create
the lakehouse if there is none).

Costs: `info` is a point lookup (plus one read of the definition for a file's size);
`ls` is one key-range scan per kind and reads no definition (a file's `size` is None in
listings: it is the length of the JSON, known only by reading the definition; `info`,
`size`, `cat` and `ls(..., sizes=True)` read it); `find`, `glob` and `du` are one range
scan over the catalog (`du` then reads the definitions, in parallel, for their sizes).
Listings of a fixed version are cached by path forever (they cannot change); listings of
the latest version are cached with their version, revalidated by a version probe and
dropped on every write made through this instance.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import inspect
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from fsspec.implementations.local import trailing_sep
from fsspec.spec import AbstractFileSystem, make_instance
from fsspec.utils import other_paths

from trinityfs.catalog import CatalogTransaction, Lakehouse, ObjectRef
from trinityfs.catalog.model import OBJECT_KINDS
from trinityfs.errors import CommitConflictError, TrinityError
from trinityfs.fs import content as content_mod
from trinityfs.fs.errors import (
    InvalidRequest,
    exists,
    is_a_directory,
    not_a_directory,
    not_found,
    not_permitted,
    read_only,
    to_os_error,
    translate,
)
from trinityfs.fs.files import TrinityReadFile, TrinityTextWriter, TrinityWriteFile
from trinityfs.fs.model import move_namespace, select_label, versions_dir_names
from trinityfs.fs.paths import (
    LATEST,
    PROTOCOL,
    VERSIONS_DIR,
    TrinityPath,
    VersionRef,
    encode_name,
    parse_path,
    strip_protocol,
)
from trinityfs.fs.transaction import TrinityTransaction

DEFAULT_ROOT = "lakehouse"
ROOT_ENV = "TRINITYFS_ROOT"
SIZE_THREADS = 16
LISTING_CACHE_ENTRIES = 1_000_000  # entries over all cached listings
SNAPSHOT_CACHE = 16
CATALOG_CACHE = 2  # whole-catalog scans (find, glob, du) of the last versions
NAMESPACE_PAGE = 1000
TWO_LEVELS = "the catalog is two levels deep: /<namespace>/<table or view>"


def default_root() -> str:
    """The root used when none is given: $TRINITYFS_ROOT, else ./lakehouse."""
    return os.environ.get(ROOT_ENV) or DEFAULT_ROOT


def resolve_root(root: str | os.PathLike | None) -> str:
    """A lakehouse URL; a local path becomes absolute (workers may run elsewhere)."""
    text = os.fspath(root) if root is not None else default_root()
    if "://" not in text:
        text = os.path.abspath(os.path.expanduser(text))
    return text


def latest_path(namespace: str | None = None, name: str | None = None) -> str:
    """The writable path of a namespace or object (`/v/latest/v/...` for namespace "v")."""
    if namespace is None:
        return "/"
    prefix = f"/{VERSIONS_DIR}/{LATEST}" if namespace == VERSIONS_DIR else ""
    tail = f"/{encode_name(name)}" if name is not None else ""
    return f"{prefix}/{encode_name(namespace)}{tail}"


def _millis_to_datetime(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, UTC)


class _Target:
    """A resolved path: the parsed path, the reader of its version, and that version."""

    __slots__ = ("export", "fixed", "p", "reader", "version")

    def __init__(
        self,
        p: TrinityPath,
        reader: Any,
        version: int | None,
        fixed: bool,
        export: str | None = None,
    ):
        self.p = p
        self.reader = reader
        self.version = version
        self.fixed = fixed
        self.export = export


class TrinityFileSystem(AbstractFileSystem):
    """A TrinityLake lakehouse as a filesystem; see the module docstring."""

    protocol = PROTOCOL
    root_marker = "/"
    transaction_type = TrinityTransaction

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        storage_options: dict[str, Any] | None = None,
        create: bool = False,
        **kwargs: Any,
    ):
        # before fsspec's __init__, which sets _intrans/_transaction (per thread: below)
        self._local = threading.local()
        super().__init__(**kwargs)
        self.root = resolve_root(root)
        self.lake_storage_options = dict(storage_options or {})
        self.create = bool(create)
        self._lake: Lakehouse | None = None
        self._lock = threading.RLock()
        self._snapshots: OrderedDict[int, Any] = OrderedDict()
        self._listings: OrderedDict[str, tuple[int | None, list[dict[str, Any]]]] = OrderedDict()
        self._listing_entries = 0
        self._catalogs: OrderedDict[tuple[str, int], list[tuple[ObjectRef, str]]] = OrderedDict()

    # fsspec keeps the open transaction in two instance attributes; one filesystem object
    # is shared by every thread (fsspec caches instances), so a transaction belongs to the
    # thread that opened it: another thread's writes never join (or die with) it.
    @property
    def _intrans(self) -> bool:  # type: ignore[override]
        return getattr(self._local, "intrans", False)

    @_intrans.setter
    def _intrans(self, value: bool) -> None:
        self._local.intrans = value

    @property
    def _transaction(self) -> Any:  # type: ignore[override]
        return getattr(self._local, "transaction", None)

    @_transaction.setter
    def _transaction(self, value: Any) -> None:
        self._local.transaction = value

    def __reduce__(self):
        kwargs = dict(self.storage_options)
        kwargs.update(root=self.root, storage_options=self.lake_storage_options, create=self.create)
        return make_instance, (type(self), (), kwargs)

    def __repr__(self) -> str:
        return f"TrinityFileSystem(root={self.root!r})"

    # -- paths ---------------------------------------------------------------------------

    @classmethod
    def _strip_protocol(cls, path):
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        return strip_protocol(path)

    def unstrip_protocol(self, name: str) -> str:
        if name.startswith(f"{PROTOCOL}://"):
            return name
        return f"{PROTOCOL}://{strip_protocol(name)}"

    # -- the lakehouse -------------------------------------------------------------------

    @property
    def lake(self) -> Lakehouse:
        """The catalog (opened on first use; created first when `create=True`)."""
        if self._lake is None:
            with self._lock:
                if self._lake is None:
                    with translate(self.root, lookup=True):
                        if self.create:
                            self._lake = Lakehouse.create(
                                self.root,
                                storage_options=self.lake_storage_options,
                                exist_ok=True,
                            )
                        else:
                            self._lake = Lakehouse.open(
                                self.root, storage_options=self.lake_storage_options
                            )
        return self._lake

    def _current_txn(self) -> CatalogTransaction | None:
        """The catalog transaction writes go to: the fs transaction's, or this thread's batch."""
        if self._intrans and isinstance(self._transaction, TrinityTransaction):
            return self._transaction.begin()
        return getattr(self._local, "txn", None)

    def _begin_catalog_transaction(self, version: int | None = None) -> CatalogTransaction:
        with translate(self.root):
            return self.lake.transaction(version=version)

    def _commit_catalog_transaction(self, txn: CatalogTransaction) -> int | None:
        """Commit; the new version, or None when the transaction changed nothing."""
        base = txn.version
        try:
            version = txn.commit()
            return None if version == base else version
        except CommitConflictError as exc:
            raise to_os_error(exc, keys=txn.keys, path_of=latest_path) from exc
        except TrinityError as exc:
            raise to_os_error(exc) from exc
        finally:
            self._invalidate_latest()

    @contextlib.contextmanager
    def _batch(self, base_version: int | None = None) -> Iterator[CatalogTransaction]:
        """One commit for everything inside (joins the fs transaction or an outer batch)."""
        current = self._current_txn()
        if current is not None:
            yield current
            return
        txn = self._begin_catalog_transaction(base_version)
        self._local.txn = txn
        try:
            yield txn
        except BaseException:
            self._local.txn = None
            with contextlib.suppress(TrinityError):
                txn.abort()
            self._invalidate_latest()
            raise
        self._local.txn = None
        self._local.last_version = self._commit_catalog_transaction(txn)

    @contextlib.contextmanager
    def within(self, txn: CatalogTransaction) -> Iterator[TrinityFileSystem]:
        """Route the changes this thread makes in the block into `txn`, uncommitted.

        For a transaction the caller owns, e.g. a distributed transaction: the caller
        commits (or saves) it afterwards. Reads of the latest version see its changes.
        """
        if self._intrans:
            raise InvalidRequest("fs.within() cannot be used inside fs.transaction")
        previous = getattr(self._local, "txn", None)
        self._local.txn = txn
        try:
            yield self
        finally:
            self._local.txn = previous
            self._invalidate_latest()

    def _apply(
        self,
        path: str,
        change: Callable[[CatalogTransaction], Any],
        base_version: int | None = None,
    ) -> int | None:
        """Run `change` in the current transaction or as one commit; the committed version."""
        self._local.last_version = None
        with self._batch(base_version) as txn, translate(path):
            change(txn)
        return getattr(self._local, "last_version", None)

    # -- resolving paths -----------------------------------------------------------------

    def _snapshot(self, version: int) -> Any:
        with self._lock:
            snap = self._snapshots.get(version)
            if snap is not None:
                self._snapshots.move_to_end(version)
                return snap
        snap = self.lake.at(version)
        with self._lock:
            self._snapshots[version] = snap
            while len(self._snapshots) > SNAPSHOT_CACHE:
                self._snapshots.popitem(last=False)
        return snap

    def _supports_exports(self) -> bool:
        """Whether the catalog API can open exported snapshots (`Lakehouse.at(export=)`)."""
        try:
            return "export" in inspect.signature(self.lake.at).parameters
        except (TypeError, ValueError):
            return False

    def _export_names(self) -> list[str]:
        """Names of the exported snapshots of the latest version (if they can be read)."""
        if not self._supports_exports():
            return []
        latest = self._snapshot(self.lake.latest_version())
        return sorted(latest.lakehouse_def.exported_snapshots)

    def _reader(self, ref: VersionRef, path: str) -> tuple[Any, int, bool, str | None]:
        if ref.is_latest:
            txn = self._current_txn()
            if txn is not None:
                return txn, txn.version, False, None
            version = self.lake.latest_version()
            return self._snapshot(version), version, False, None
        if ref.kind == "number":
            return self._snapshot(ref.number), ref.number, True, None
        chosen = select_label(ref.text, ref.millis, self._export_names())
        if chosen == "export":
            export = self.lake.at(export=ref.text)
            return export, export.version, True, ref.text
        if chosen == "time":
            version = self.lake.version_at(ref.millis)
            return self._snapshot(version), version, True, None
        raise not_found(
            path,
            f"{ref.text!r} is not a version number, 'latest', an ISO-8601 time or an export",
        )

    def _resolve(self, path: str) -> _Target:
        p = parse_path(path)
        if p.ref is None:
            return _Target(p, None, None, False)
        with translate(p.path, lookup=True):
            reader, version, fixed, export = self._reader(p.ref, p.path)
        return _Target(p, reader, version, fixed, export)

    def _writable(self, path: str) -> TrinityPath:
        """The parsed path, if it is in the latest version (else PermissionError EROFS)."""
        p = parse_path(path)
        if not p.writable:
            raise read_only(
                p.path,
                "/v is read-only (versions, times and exports); write to / or /v/latest",
            )
        return p

    def _writable_object(self, path: str) -> TrinityPath:
        p = self._writable(path)
        if p.is_root:
            raise is_a_directory(p.path, "the root of the catalog is a directory")
        if p.depth > 2:
            raise not_permitted(p.path, TWO_LEVELS)
        if p.is_namespace:
            if self.isdir(p.path):
                raise is_a_directory(p.path, f"namespace {p.namespace!r} is a directory")
            raise not_permitted(
                p.path, "files are tables and views inside a namespace: /<namespace>/<name>"
            )
        return p

    # -- entries -------------------------------------------------------------------------

    @staticmethod
    def _dir_entry(name: str, kind: str, version: int | None, **extra: Any) -> dict[str, Any]:
        return {
            "name": name,
            "type": "directory",
            "size": 0,
            "kind": kind,
            "version": version,
            **extra,
        }

    @staticmethod
    def _file_entry(
        name: str, kind: str, version: int | None, size: int | None = None
    ) -> dict[str, Any]:
        return {"name": name, "type": "file", "size": size, "kind": kind, "version": version}

    def _version_time(self, version: int) -> datetime:
        with translate(f"/v/{version}", lookup=True):
            return _millis_to_datetime(self.lake.version_info(version).created_at_millis)

    def _versions_listing(self) -> list[dict[str, Any]]:
        with translate("/v", lookup=True):
            oldest, latest = self.lake.oldest_version(), self.lake.latest_version()
            names = versions_dir_names(oldest, latest, self._export_names())
        out = []
        for name in names:
            path = f"/{VERSIONS_DIR}/{encode_name(name)}"
            if name == LATEST:
                out.append(self._dir_entry(path, "version", latest))
            elif name.isdigit() and oldest <= int(name) <= latest:
                out.append(self._dir_entry(path, "version", int(name)))
            else:
                out.append(self._dir_entry(path, "export", None))
        return out

    def _list(self, t: _Target) -> list[dict[str, Any]]:
        """The entries of a version root or a namespace (one key-range scan per kind)."""
        p, reader, version = t.p, t.reader, t.version
        if p.is_root:
            out: list[dict[str, Any]] = []
            after = None
            while True:
                page = reader.list_namespaces(after, NAMESPACE_PAGE)
                for ns in page:
                    if p.prefix == "" and ns == VERSIONS_DIR:
                        continue  # /v is the versions directory; this one is /v/latest/v
                    out.append(self._dir_entry(p.child(ns), "namespace", version))
                if len(page) < NAMESPACE_PAGE:
                    return out
                after = page[-1]
        if p.is_namespace:
            return [
                self._file_entry(p.child(ref.name), ref.kind, version)
                for ref in reader.list_objects(p.namespace)
            ]
        raise AssertionError(p)

    def _cached_listing(self, t: _Target) -> list[dict[str, Any]]:
        key = t.p.path
        in_txn = t.p.writable and self._current_txn() is not None
        if not in_txn:
            with self._lock:
                hit = self._listings.get(key)
                if hit is not None and hit[0] == t.version:
                    self._listings.move_to_end(key)
                    return hit[1]
        with translate(t.p.path, lookup=True):
            entries = self._list(t)
        if not in_txn:
            self._cache_listing(key, t.version, entries)
        return entries

    def _cache_listing(self, key: str, version: int | None, entries: list) -> None:
        with self._lock:
            old = self._listings.pop(key, None)
            if old is not None:
                self._listing_entries -= len(old[1])
            if len(entries) > LISTING_CACHE_ENTRIES:
                return
            self._listings[key] = (version, entries)
            self._listing_entries += len(entries)
            while self._listing_entries > LISTING_CACHE_ENTRIES and self._listings:
                _, (_, dropped) = self._listings.popitem(last=False)
                self._listing_entries -= len(dropped)

    def _invalidate_latest(self) -> None:
        """Forget listings of the latest version (after a write through this instance)."""
        with self._lock:
            for key in [k for k in self._listings if parse_path(k).writable]:
                _, dropped = self._listings.pop(key)
                self._listing_entries -= len(dropped)

    def invalidate_cache(self, path: str | None = None) -> None:
        with self._lock:
            if path is None:
                self._listings.clear()
                self._listing_entries = 0
                self._snapshots.clear()
                self._catalogs.clear()
            else:
                path = strip_protocol(path)
                for key in [
                    k
                    for k in self._listings
                    if k == path or k.startswith(path + "/") or path == "/"
                ]:
                    _, dropped = self._listings.pop(key)
                    self._listing_entries -= len(dropped)
        super().invalidate_cache(path)

    # -- sizes (read definitions) --------------------------------------------------------

    def _render(self, reader: Any, ref: ObjectRef, location: str) -> bytes:
        return content_mod.render(ref.kind, reader.read_definition(ref, location))

    def _sizes(self, reader: Any, items: list[tuple[ObjectRef, str]]) -> list[int]:
        """JSON sizes of many objects, reading their definitions in parallel."""
        if len(items) < 8:
            return [len(self._render(reader, ref, loc)) for ref, loc in items]
        with ThreadPoolExecutor(SIZE_THREADS) as pool:
            return list(pool.map(lambda item: len(self._render(reader, *item)), items))

    def _fill_sizes(self, t: _Target, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted = [e for e in entries if e["type"] == "file" and e["size"] is None]
        if not wanted:
            return entries
        items = []
        for e in wanted:
            p = parse_path(e["name"])
            location = t.reader.object_location(e["kind"], p.namespace, p.name)
            items.append((ObjectRef(p.namespace, p.name, e["kind"]), location))
        with translate(t.p.path, lookup=True):
            sizes = self._sizes(t.reader, items)
        by_name = {e["name"]: size for e, size in zip(wanted, sizes, strict=True)}
        return [{**e, "size": by_name[e["name"]]} if e["name"] in by_name else e for e in entries]

    # -- reading -------------------------------------------------------------------------

    def ls(self, path: str, detail: bool = True, sizes: bool = False, **kwargs: Any):
        """Entries of a directory (or the file itself). `sizes=True` reads every definition."""
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            entries = self._versions_listing()
        elif p.is_root or p.is_namespace:
            entries = self._cached_listing(t)
        elif p.is_object:
            entries = [self.info(p.path)]
        else:
            raise not_found(p.path, TWO_LEVELS)
        if sizes:
            entries = self._fill_sizes(t, entries)
        if detail:
            return list(entries)
        return [e["name"] for e in entries]

    def _object(self, t: _Target) -> tuple[str, str, Any]:
        """(kind, location, definition) of the object at `t`, or FileNotFoundError."""
        p, reader = t.p, t.reader
        with translate(p.path, lookup=True):
            for kind in OBJECT_KINDS:
                location = reader.object_location(kind, p.namespace, p.name)
                if location is not None:
                    ref = ObjectRef(p.namespace, p.name, kind)
                    return kind, location, reader.read_definition(ref, location)
            if not reader.namespace_exists(p.namespace):
                raise not_found(
                    p.path, f"namespace {p.namespace!r} does not exist at version {t.version}"
                )
        raise not_found(p.path, f"no table or view {p.namespace}.{p.name} at version {t.version}")

    def _object_info(self, t: _Target) -> tuple[dict[str, Any], bytes]:
        kind, _location, msg = self._object(t)
        data = content_mod.render(kind, msg)
        info = self._file_entry(t.p.path, kind, t.version, len(data))
        info["id"] = msg.id
        return info, data

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        """type, size, kind, version (and properties for a namespace): a point lookup."""
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            with translate(p.path, lookup=True):
                latest = self.lake.latest_version()
            return self._dir_entry(p.path, "versions", None, latest=latest)
        if p.is_root:
            kind = "export" if t.export else "version"
            created = self._version_time(t.version) if t.export is None else None
            return self._dir_entry(p.path, kind, t.version, created=created)
        if p.is_namespace:
            with translate(p.path, lookup=True):
                msg = t.reader.describe_namespace(p.namespace)
            return self._dir_entry(
                p.path,
                "namespace",
                t.version,
                properties=dict(msg.properties),
                id=msg.id,
                **self._times(t),
            )
        if p.is_object:
            info = self._object_info(t)[0]
            info.update(self._times(t))
            return info
        raise not_found(p.path, TWO_LEVELS)

    def _times(self, t: _Target) -> dict[str, datetime]:
        """`mtime` (when what the path holds took effect) and `created` of an existing
        namespace or object (the time of the version read, for an export)."""
        if t.export is not None:
            return {}
        return {
            "mtime": self._changed_at_target(t, same=True),
            "created": self._changed_at_target(t, same=False),
        }

    def _light(self, path: str) -> str | None:
        """'directory', 'file' or None, by key lookups only (no definition read)."""
        try:
            t = self._resolve(path)
            p = t.p
            if p.is_versions_dir:
                return "directory" if self.lake is not None else None
            if p.is_root:
                return "directory"
            if p.depth > 2:
                return None
            with translate(p.path, lookup=True):
                if p.is_namespace:
                    return "directory" if t.reader.namespace_exists(p.namespace) else None
                for kind in OBJECT_KINDS:
                    if t.reader.object_location(kind, p.namespace, p.name) is not None:
                        return "file"
        except (FileNotFoundError, NotADirectoryError):
            return None
        return None

    def exists(self, path: str, **kwargs: Any) -> bool:
        return self._light(path) is not None

    def lexists(self, path: str, **kwargs: Any) -> bool:
        return self.exists(path)

    def isdir(self, path: str) -> bool:
        return self._light(path) == "directory"

    def isfile(self, path: str) -> bool:
        return self._light(path) == "file"

    def cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        t = self._resolve(path)
        if not t.p.is_object:
            if t.p.depth > 2:
                raise not_found(t.p.path, TWO_LEVELS)
            self.info(t.p.path)  # FileNotFoundError when it does not exist
            raise is_a_directory(t.p.path)
        data = self._object_info(t)[1]
        return data[start:end] if (start is not None or end is not None) else data

    def open(
        self, path, mode="rb", block_size=None, cache_options=None, compression=None, **kwargs
    ):
        """fsspec's open; text writes leave nothing behind when their block raises."""
        if "b" not in mode and ("w" in mode or "x" in mode):
            text = {k: kwargs.pop(k) for k in ("encoding", "errors", "newline") if k in kwargs}
            binary = super().open(
                path,
                mode.replace("t", "") + "b",
                block_size=block_size,
                cache_options=cache_options,
                compression=compression,
                **kwargs,
            )
            return TrinityTextWriter(binary, **text)
        return super().open(
            path,
            mode,
            block_size=block_size,
            cache_options=cache_options,
            compression=compression,
            **kwargs,
        )

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: Any = None,
        autocommit: bool = True,
        cache_options: Any = None,
        **kwargs: Any,
    ):
        path = strip_protocol(path)
        if mode == "rb":
            t = self._resolve(path)
            if not t.p.is_object:
                self.cat_file(path)  # raises the right error
            info, data = self._object_info(t)
            return TrinityReadFile(self, path, data, info)
        if mode in ("wb", "xb"):
            p = self._writable_object(path)
            if mode == "xb" and self.exists(p.path):
                raise exists(p.path, f"{p.namespace}.{p.name} already exists")
            return TrinityWriteFile(self, p.path, mode, autocommit)
        raise InvalidRequest(
            f"{path}: mode {mode!r} is not supported; definitions open as 'rb', 'wb' or 'xb'"
        )

    def modified(self, path: str) -> datetime:
        """When the current definition (or namespace) took effect, or a version's time.

        A binary search over versions for the one that wrote what `path` holds now
        (O(log versions) point lookups).
        """
        return self._changed_at(path, same=True)

    def created(self, path: str) -> datetime:
        """When the object or namespace came into existence (its latest creation)."""
        return self._changed_at(path, same=False)

    def _changed_at(self, path: str, same: bool) -> datetime:
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            with translate(p.path, lookup=True):
                return self._version_time(
                    self.lake.oldest_version() if not same else self.lake.latest_version()
                )
        if p.is_root:
            if t.export is not None:
                raise not_found(p.path, "an export has no commit time")
            return self._version_time(t.version)
        if p.depth > 2:
            raise not_found(p.path, TWO_LEVELS)
        self.info(p.path)  # FileNotFoundError if missing
        return self._changed_at_target(t, same)

    def _changed_at_target(self, t: _Target, same: bool) -> datetime:
        """Binary search for the first version of the run that holds what `t` holds now
        (`same`), or that holds it as the same kind (its latest creation)."""
        p = t.p
        base = t.version
        if p.writable and self._current_txn() is not None:
            base = self._current_txn().version

        def location_at(version: int) -> tuple | None:
            reader = self._snapshot(version)
            if p.is_namespace:
                if not reader.namespace_exists(p.namespace):
                    return None
                ns_def = reader.describe_namespace(p.namespace)
                return ("namespace", ns_def.id, sorted(ns_def.properties.items()))
            for kind in OBJECT_KINDS:
                loc = reader.object_location(kind, p.namespace, p.name)
                if loc is not None:
                    return (kind, loc)
            return None

        with translate(p.path, lookup=True):
            now = location_at(base)
            if now is None:  # created inside the running transaction
                return datetime.now(UTC)
            lo, hi = self.lake.oldest_version(), base
            while lo < hi:
                mid = (lo + hi) // 2
                at = location_at(mid)
                holds = (at == now) if same else (at is not None and at[0] == now[0])
                if holds:
                    hi = mid
                else:
                    lo = mid + 1
            return self._version_time(lo)

    def ukey(self, path: str) -> str:
        """Changes exactly when the content changes (not with unrelated commits)."""
        info = self.info(path)
        if info["type"] == "file":
            return hashlib.sha256(self.cat_file(path)).hexdigest()
        stable = {k: v for k, v in info.items() if k not in ("version", "latest", "created")}
        return hashlib.sha256(repr(sorted(stable.items())).encode()).hexdigest()

    def checksum(self, path: str) -> int:
        return int(self.ukey(path)[:32], 16)

    # -- find, glob, du ------------------------------------------------------------------

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        sizes: bool = False,
        **kwargs: Any,
    ):
        """Everything below `path` by one range scan over the catalog (not one ls per dir)."""
        if maxdepth is not None and maxdepth < 1:
            raise ValueError("maxdepth must be at least 1")
        out: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self._find_into(out, path, maxdepth, withdirs, sizes)
        names = sorted(out)
        if detail:
            return {name: out[name] for name in names}
        return names

    def _find_into(
        self, out: dict, path: str, maxdepth: int | None, withdirs: bool, sizes: bool
    ) -> None:
        t = self._resolve(path)
        p = t.p
        if p.is_versions_dir:
            if withdirs:
                out[p.path] = self.info(p.path)
            for entry in self._versions_listing():
                if withdirs:
                    out[entry["name"]] = entry
                if maxdepth is None or maxdepth > 1:
                    self._find_into(
                        out,
                        entry["name"],
                        None if maxdepth is None else maxdepth - 1,
                        withdirs,
                        sizes,
                    )
            return
        if p.is_object:
            out[p.path] = self.info(p.path)
            return
        if p.depth > 2:
            return
        if withdirs and p.path != "/":
            out[p.path] = self.info(p.path)
        if p.is_namespace or maxdepth == 1:
            entries = self._cached_listing(t)
            if sizes:
                entries = self._fill_sizes(t, entries)
            for entry in entries:
                if withdirs or entry["type"] == "file":
                    out[entry["name"]] = entry
            return
        # the whole catalog of a version: one scan per kind, in key order
        files: list[tuple[ObjectRef, str]] = []
        with translate(p.path, lookup=True):
            for ref, location in self._catalog(t):
                if p.prefix == "" and ref.namespace == VERSIONS_DIR:
                    continue  # reachable as /v/latest/v
                if ref.name is None:
                    if withdirs:
                        name = p.child(ref.namespace)
                        out[name] = self._dir_entry(name, "namespace", t.version)
                else:
                    files.append((ref, location))
            found = self._sizes(t.reader, files) if sizes else [None] * len(files)
        for (ref, _location), size in zip(files, found, strict=True):
            name = p.with_names(ref.namespace, ref.name)
            out[name] = self._file_entry(name, ref.kind, t.version, size)

    def _catalog(self, t: _Target) -> list[tuple[ObjectRef, str]]:
        """Every namespace, table and view of a version with its location (one range scan
        per kind), cached for the last few versions: a version never changes."""
        if t.p.writable and self._current_txn() is not None:
            return list(t.reader.iter_all())
        key = (t.export or "", t.version)
        with self._lock:
            hit = self._catalogs.get(key)
            if hit is not None:
                self._catalogs.move_to_end(key)
                return hit
        items = list(t.reader.iter_all())
        with self._lock:
            self._catalogs[key] = items
            while len(self._catalogs) > CATALOG_CACHE:
                self._catalogs.popitem(last=False)
        return items

    def du(
        self,
        path: str,
        total: bool = True,
        maxdepth: int | None = None,
        withdirs: bool = False,
        **kwargs: Any,
    ):
        """Bytes of the definitions (as JSON) below `path`: one scan, then parallel reads."""
        found = self.find(path, maxdepth=maxdepth, withdirs=withdirs, detail=True, sizes=True)
        sizes = {name: info.get("size") or 0 for name, info in found.items()}
        return sum(sizes.values()) if total else sizes

    # -- writing -------------------------------------------------------------------------

    def _put_definition(
        self,
        txn: CatalogTransaction,
        p: TrinityPath,
        kind: str,
        msg: Any,
        mode: str = "overwrite",
        make_namespace: bool = False,
    ) -> None:
        """Create or replace the object at `p` with `msg` (unchanged -> no write at all)."""
        ns, name = p.namespace, p.name
        existing = None
        for k in OBJECT_KINDS:
            if txn.object_location(k, ns, name) is not None:
                existing = k
        if mode == "create" and existing is not None:
            raise exists(p.path, f"{existing} {ns}.{name} already exists")
        if existing is None and make_namespace:
            txn.create_namespace(ns, exist_ok=True)
        if existing == kind:
            old = txn.describe(kind, ns, name)
            if not msg.id:
                msg.id = old.id
            if msg == old:
                return
            txn.replace(kind, ns, name, msg)
            return
        if existing is not None:
            txn.drop(existing, ns, name)
        txn.create(kind, ns, name, msg)

    def _write_object(
        self, path: str, data: bytes, mode: str = "overwrite", base_version: int | None = None
    ) -> int | None:
        """Parse and commit written bytes; the new version (None if nothing changed)."""
        p = self._writable_object(path)
        parsed = content_mod.parse(data, p.path)

        def change(txn: CatalogTransaction) -> None:
            kind = parsed.kind
            if kind is None:  # an empty write keeps the kind of what is there
                kind = next(
                    (k for k in OBJECT_KINDS if txn.object_location(k, p.namespace, p.name)),
                    "table",
                )
            msg = content_mod.to_message(kind, parsed.definition, p.path)
            self._put_definition(txn, p, kind, msg, mode)

        return self._apply(p.path, change, base_version)

    def write_definition(
        self, path: str, data: bytes, mode: str = "overwrite", base_version: int | None = None
    ) -> int | None:
        """Write file content; with `base_version`, conflict if it changed since then.

        Returns the committed version, or None when nothing changed (or inside a
        transaction). `mode="create"` raises FileExistsError if the object exists.
        """
        return self._write_object(path, data, mode, base_version)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        if mode not in ("overwrite", "create"):
            raise InvalidRequest(f"{path}: pipe_file mode must be 'overwrite' or 'create'")
        self._write_object(path, value, mode)

    def pipe(self, path, value=None, **kwargs):
        with self._batch():
            return super().pipe(path, value, **kwargs)

    def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> None:
        """An empty definition; with truncate=False an existing object is left alone."""
        if not truncate and self.exists(path):
            return
        self._write_object(path, b"")

    def put(self, lpath, rpath, recursive=False, callback=None, maxdepth=None, **kwargs):
        with self._batch():
            if callback is None:
                return super().put(lpath, rpath, recursive=recursive, maxdepth=maxdepth, **kwargs)
            return super().put(
                lpath, rpath, recursive=recursive, callback=callback, maxdepth=maxdepth, **kwargs
            )

    def mkdir(
        self,
        path: str,
        create_parents: bool = True,
        properties: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Create a namespace (optionally with properties); FileExistsError if it exists."""
        p = parse_path(path)
        if p.is_versions_dir:
            raise exists(p.path, "/v is the versions directory")
        p = self._writable(path)
        if p.is_root:
            raise exists(p.path, "the root directory always exists")
        if p.depth > 1:
            raise not_permitted(p.path, "directories are namespaces, at the top level only")
        self._apply(p.path, lambda txn: txn.create_namespace(p.namespace, properties))

    def makedirs(
        self, path: str, exist_ok: bool = False, properties: dict[str, str] | None = None
    ) -> None:
        p = parse_path(path)
        if p.is_versions_dir or p.is_root:
            if not exist_ok:
                raise exists(p.path)
            if not p.is_versions_dir:
                self._resolve(p.path)  # the version must exist
            return
        if not p.writable:
            if exist_ok and self.isdir(p.path):
                return
            self._writable(path)
        if p.depth > 1:
            raise not_permitted(p.path, "directories are namespaces, at the top level only")

        def change(txn: CatalogTransaction) -> None:
            txn.create_namespace(p.namespace, properties, exist_ok=exist_ok)

        self._apply(p.path, change)

    def mkdirs(self, path: str, exist_ok: bool = False) -> None:
        self.makedirs(path, exist_ok=exist_ok)

    def rmdir(self, path: str) -> None:
        """Drop an empty namespace (OSError ENOTEMPTY if it holds tables or views)."""
        p = self._writable(path)
        if p.is_root:
            raise OSError(errno.EBUSY, "the root directory cannot be removed", p.path)
        if not p.is_namespace:
            raise not_a_directory(p.path)
        self._apply(p.path, lambda txn: txn.drop_namespace(p.namespace))

    def _drop(self, txn: CatalogTransaction, p: TrinityPath) -> None:
        for kind in OBJECT_KINDS:
            if txn.object_location(kind, p.namespace, p.name) is not None:
                txn.drop(kind, p.namespace, p.name)
                return
        if not txn.namespace_exists(p.namespace):
            raise not_found(p.path, f"namespace {p.namespace!r} does not exist")
        raise not_found(p.path, f"no table or view {p.namespace}.{p.name}")

    def rm_file(self, path: str) -> None:
        p = self._writable(path)
        if not p.is_object:
            if p.depth > 2:
                raise not_found(p.path, TWO_LEVELS)
            raise is_a_directory(p.path, "use rmdir, or rm with recursive=True")
        self._apply(p.path, lambda txn: self._drop(txn, p))

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path, recursive: bool = False, maxdepth: int | None = None) -> None:
        """Delete files, and with recursive namespaces too: one commit in all."""
        with self._batch() as txn:
            paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
            parsed = [self._writable(p) for p in paths]
            dropped: set[str] = set()
            cascade = maxdepth is None
            for p in parsed:  # namespaces first: a cascade drops what is inside
                if p.is_root and not recursive:
                    raise is_a_directory(p.path, "use recursive=True")
                if p.is_namespace:
                    if not recursive:
                        raise is_a_directory(
                            p.path, "is a namespace: use rmdir, or rm with recursive=True"
                        )
                    if cascade:
                        with translate(p.path):
                            txn.drop_namespace(p.namespace, cascade=True)
                        dropped.add(p.namespace)
            for p in reversed(parsed):
                if p.is_object and p.namespace not in dropped:
                    with translate(p.path):
                        self._drop(txn, p)
                elif p.depth > 2:
                    raise not_found(p.path, TWO_LEVELS)
            if not cascade:
                for p in reversed(parsed):
                    if p.is_namespace:
                        with translate(p.path):
                            txn.drop_namespace(p.namespace)

    def _copy_pairs(
        self, path1, path2, recursive: bool, maxdepth: int | None
    ) -> list[tuple[str, str]]:
        """Source and destination paths, exactly as fsspec's `copy` computes them."""
        if isinstance(path1, list) and isinstance(path2, list):
            return list(zip(path1, path2, strict=True))
        source_is_str = isinstance(path1, str)
        paths1 = self.expand_path(path1, recursive=recursive, maxdepth=maxdepth)
        if source_is_str and (not recursive or maxdepth is not None):
            paths1 = [p for p in paths1 if not (trailing_sep(p) or self.isdir(p))]
            if not paths1:
                return []
        dest_is_dir = isinstance(path2, str) and (trailing_sep(path2) or self.isdir(path2))
        exist = source_is_str and (
            dest_is_dir and not trailing_sep(path1)
        )  # (paths are literal: glob characters are name characters)
        paths2 = other_paths(paths1, path2, exists=exist, flatten=not source_is_str)
        return list(zip(paths1, paths2, strict=True))

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Copy one definition (any version to the latest), or make the directory.

        The copy gets a fresh id, except when it restores the same object from an older
        version (`cp /v/99/ns/t /ns/t`), which keeps the id that version had. The
        destination's namespace is created when missing. Unchanged -> no commit.
        """
        src = self._resolve(path1)
        dst = self._writable(path2)
        if src.p.is_versions_dir or src.p.is_root or src.p.is_namespace:
            properties = None
            if src.p.is_namespace:
                properties = self.info(src.p.path)["properties"]
            elif not src.p.is_root:
                raise not_permitted(dst.path, "cannot copy /v itself")
            if not dst.is_root:
                self.makedirs(dst.path, exist_ok=True, properties=properties)
            return
        if not src.p.is_object:
            raise not_found(src.p.path, TWO_LEVELS)
        kind, _location, msg = self._object(src)
        dst = self._writable_object(dst.path)
        same_object = (src.p.namespace, src.p.name) == (dst.namespace, dst.name)
        if not same_object:
            msg.id = ""

        def change(txn: CatalogTransaction) -> None:
            self._put_definition(txn, dst, kind, msg, make_namespace=True)

        self._apply(dst.path, change)

    def copy(self, path1, path2, recursive=False, maxdepth=None, on_error=None, **kwargs):
        """fsspec's copy of literal paths (glob characters are name characters), as one
        commit; pass `fs.glob(pattern)` for a pattern."""
        with self._batch():
            pairs = self._copy_pairs(path1, path2, recursive, maxdepth)
            if not pairs:
                return None
            return super().copy(
                [a for a, _ in pairs],
                [b for _, b in pairs],
                recursive=recursive,
                maxdepth=maxdepth,
                on_error=on_error,
                **kwargs,
            )

    def expand_path(self, path, recursive=False, maxdepth=None, assume_literal=True, **kwargs):
        """fsspec's expand_path, literal by default: `rm`, `mv`, `cp`, `get` of an exact
        name never expand `* ? [ ]` (a name may hold them). Patterns: `glob`, or
        `expand_path(..., assume_literal=False)`."""
        return super().expand_path(
            path, recursive=recursive, maxdepth=maxdepth, assume_literal=assume_literal, **kwargs
        )

    def mv(
        self, path1, path2, recursive: bool = False, maxdepth: int | None = None, **kwargs: Any
    ) -> None:
        """Rename tables and views (keeping their ids) and namespaces: one commit.

        A directory moves with its content even without recursive=True (like POSIX mv).
        Moving out of an old version is refused (PermissionError EROFS): use cp.
        """
        if path1 == path2:
            return
        with self._batch() as txn:
            if isinstance(path1, str) and isinstance(path2, str):
                src, dst = self._writable(path1), self._writable(path2)
                if (
                    src.is_namespace
                    and dst.is_namespace
                    and not txn.namespace_exists(dst.namespace)
                ):
                    with translate(src.path, lookup=True):
                        txn.describe_namespace(src.namespace)  # FileNotFoundError if missing
                    with translate(dst.path):
                        move_namespace(txn, src.namespace, dst.namespace)  # ids kept
                    return
            if isinstance(path1, str) and self.isdir(path1):
                recursive = True
            pairs = self._copy_pairs(path1, path2, recursive, maxdepth)
            moved_dirs: list[TrinityPath] = []
            for p1, p2 in pairs:
                src = self._writable(p1)
                if src.is_root:
                    raise not_permitted(src.path, "the root directory cannot be moved")
                if src.is_namespace:
                    self._move_namespace(txn, src, self._writable(p2))
                    moved_dirs.append(src)
                elif src.is_object:
                    self._rename(txn, src, self._writable_object(p2))
                else:
                    raise not_found(src.path, TWO_LEVELS)
            for src in reversed(moved_dirs):
                if latest_path(src.namespace) not in {
                    p2 for _, p2 in pairs
                } and txn.namespace_exists(src.namespace):
                    with translate(src.path):
                        txn.drop_namespace(src.namespace, cascade=True)

    def _move_namespace(self, txn: CatalogTransaction, src: TrinityPath, dst: TrinityPath) -> None:
        """Create the destination namespace with the source's id and properties."""
        if not dst.is_namespace:
            raise not_permitted(dst.path, "directories are namespaces, at the top level only")
        with translate(src.path, lookup=True):
            definition = txn.describe_namespace(src.namespace)
        with translate(dst.path):
            if not txn.namespace_exists(dst.namespace):
                txn.create_namespace(dst.namespace)
                txn.replace_namespace(
                    dst.namespace,
                    {"id": definition.id, "properties": dict(definition.properties)},
                )

    def _rename(self, txn: CatalogTransaction, src: TrinityPath, dst: TrinityPath) -> None:
        if (src.namespace, src.name) == (dst.namespace, dst.name):
            return
        with translate(src.path, lookup=True):
            kind = next(
                (k for k in OBJECT_KINDS if txn.object_location(k, src.namespace, src.name)), None
            )
        if kind is None:
            raise not_found(src.path, f"no table or view {src.namespace}.{src.name}")
        with translate(dst.path):
            txn.create_namespace(dst.namespace, exist_ok=True)
            for k in OBJECT_KINDS:
                if txn.object_location(k, dst.namespace, dst.name) is not None:
                    txn.drop(k, dst.namespace, dst.name)
            txn.rename(kind, src.namespace, src.name, dst.namespace, dst.name)

    # -- namespace properties ------------------------------------------------------------

    def properties(self, path: str) -> dict[str, str]:
        """The properties of a namespace (any version)."""
        info = self.info(path)
        if info.get("kind") != "namespace":
            raise not_a_directory(info["name"], "only namespaces have properties")
        return dict(info["properties"])

    def set_properties(
        self, path: str, updates: dict[str, str] | None = None, removals=()
    ) -> int | None:
        """Set and remove namespace properties: one commit (none if nothing changes)."""
        p = self._writable(path)
        if not p.is_namespace:
            raise not_a_directory(p.path, "only namespaces have properties")
        updates = dict(updates or {})
        removals = list(removals)
        for key, value in updates.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidRequest(f"{p.path}: namespace properties are strings: {key!r}")

        def change(txn: CatalogTransaction) -> None:
            current = txn.namespace_properties(p.namespace)
            wanted = {k: v for k, v in current.items() if k not in removals}
            wanted.update(updates)
            if wanted != current:
                txn.set_namespace_properties(p.namespace, updates, removals)

        return self._apply(p.path, change)

    def getxattr(self, path: str, attr: str) -> str:
        """A namespace property (OSError ENODATA if it is not set)."""
        props = self.properties(path)
        if attr not in props:
            raise OSError(errno.ENODATA, f"no property {attr!r}", strip_protocol(path))
        return props[attr]

    def listxattr(self, path: str) -> list[str]:
        return sorted(self.properties(path))

    def setxattrs(self, path: str, copy_kwargs: Any = None, **properties: str | None) -> None:
        """Set namespace properties; a value of None removes that property."""
        updates = {k: v for k, v in properties.items() if v is not None}
        removals = [k for k, v in properties.items() if v is None]
        self.set_properties(path, updates, removals)

    def removexattr(self, path: str, attr: str) -> None:
        self.getxattr(path, attr)
        self.set_properties(path, removals=[attr])


__all__ = ["TrinityFileSystem", "default_root", "latest_path", "resolve_root"]
