"""`TrinityFileSystem`: a TrinityLake catalog as an fsspec filesystem (protocol "trinity").

Namespaces are directories, tables and views are files whose content is their definition
as stable JSON (see `trinityfs.fs.content`), and old versions are read-only directories
under `/v` (see `trinityfs.fs.paths` for the grammar). Every change is a catalog
transaction: each closed file, `pipe`, `rm`, `mkdir`, `rmdir`, `mv`, `cp`, `put` is one
commit, and `with fs.transaction:` makes everything inside it one commit.

Options: `root` (the lakehouse URL: a local directory, memory://..., s3://...; default
from fsspec's config / FSSPEC_TRINITY_ROOT, then TRINITYFS_ROOT, then ./lakehouse),
`storage_options` (passed to the store, e.g. S3 endpoint and keys; merged key by key
over $TRINITYFS_STORAGE_OPTIONS and fsspec's [trinity] storage_options), `create`
(create the lakehouse if there is none), `max_staleness_seconds` (the catalog's opt-in
staleness bound for "latest", else $TRINITYFS_MAX_STALENESS, else 0: every latest read
asks storage), `verify` ("reads" or "tree", else $TRINITYFS_VERIFY). They are read by the
catalog's one reader (`trinityfs.catalog.read_config`), as by the CLI and the mount. A
version pin (`version=`, fsspec's [trinity] version, $TRINITYFS_VERSION) is refused:
paths choose versions (/v/<selector>/...). Any other keyword is a TypeError.

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
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fsspec.spec import AbstractFileSystem, make_instance

from trinityfs.catalog import CatalogTransaction, Lakehouse, ObjectRef
from trinityfs.catalog.paths import PathModel
from trinityfs.errors import CommitConflictError, TrinityError
from trinityfs.fs.common import (
    CATALOG_CACHE,
    LISTING_CACHE_ENTRIES,
    ROOT_ENV,
    SNAPSHOT_CACHE,
    TWO_LEVELS,
    _Target,
    default_root,
    filesystem_config,
    latest_path,
    resolve_root,
)
from trinityfs.fs.errors import (
    InvalidRequest,
    is_a_directory,
    not_found,
    not_permitted,
    read_only,
    to_os_error,
    translate,
)
from trinityfs.fs.paths import (
    PROTOCOL,
    PathNameError,
    TrinityPath,
    parse_path,
    strip_protocol,
)
from trinityfs.fs.reading import Listing, ReadingMixin
from trinityfs.fs.transaction import TrinityTransaction
from trinityfs.fs.writing import WritingMixin
from trinityfs.lru import LRU


class TrinityFileSystem(ReadingMixin, WritingMixin, AbstractFileSystem):
    """A TrinityLake lakehouse as a filesystem; see the module docstring."""

    protocol = PROTOCOL
    root_marker = "/"
    transaction_type = TrinityTransaction

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        storage_options: dict[str, Any] | None = None,
        create: bool = False,
        *,
        max_staleness_seconds: float | str | None = None,
        verify: str | None = None,
        **kwargs: Any,
    ):
        # before fsspec's __init__, which sets _intrans/_transaction (per thread: below)
        self._local = threading.local()
        config = filesystem_config(root, storage_options, max_staleness_seconds, verify, kwargs)
        super().__init__()
        self.config = config
        self.root = config.root
        self.lake_storage_options = dict(config.storage_options)
        self.create = bool(create)
        self._lake: Lakehouse | None = None
        self._lock = threading.RLock()
        self._model: PathModel | None = None
        # path -> (version, entries), bounded by the entries of all listings together
        self._listings: LRU[str, tuple[int | None, Listing]] = LRU(
            LISTING_CACHE_ENTRIES, weigh=lambda hit: len(hit[1])
        )
        # (export, version) -> every namespace, table and view with its location
        self._catalogs: LRU[tuple[str, int], list[tuple[ObjectRef, str]]] = LRU(CATALOG_CACHE)

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
        kwargs = dict(self.storage_options)  # what fsspec was given, then the resolved
        kwargs.update(
            root=self.root,
            storage_options=self.lake_storage_options,
            create=self.create,
            max_staleness_seconds=self.config.max_staleness_seconds,
            verify=self.config.verify,
        )
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
                        self._lake = self.config.open(create=self.create)
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
            applied = getattr(self._local, "applied", 0)
            try:
                yield current
            except BaseException as exc:
                if getattr(self._local, "applied", 0) != applied:
                    self._doom_transaction(exc)
                raise
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
        self._local.applied = getattr(self._local, "applied", 0) + 1
        return getattr(self._local, "last_version", None)

    def _doom_transaction(self, exc: BaseException) -> None:
        """A call joined to `with fs.transaction:` (put or pipe of several files) failed
        after part of it was applied: the transaction may commit nothing, or the part
        would land although the call raised."""
        trans = self._transaction
        if self._intrans and isinstance(trans, TrinityTransaction):
            trans.doom(f"a call failed part-way inside the transaction ({exc})")

    # -- resolving paths -----------------------------------------------------------------

    @property
    def model(self) -> PathModel:
        """The path model both trinity:// and the mount use (`trinityfs.catalog.paths`)."""
        if self._model is None:
            lake = self.lake
            with self._lock:
                if self._model is None:
                    self._model = PathModel(lake, snapshots=SNAPSHOT_CACHE)
        return self._model

    def _resolve(self, path: str) -> _Target:
        try:
            p = parse_path(path)
        except PathNameError as exc:  # not a path of any name (paths.decode_name)
            raise not_found(os.fspath(path), str(exc)) from None
        if p.ref is None:
            return _Target(p, None)
        with translate(p.path, lookup=True):
            if p.ref.kind == "latest":
                local = self._local  # `_current_txn()`, its common case inlined
                intrans = getattr(local, "intrans", False)
                txn = self._current_txn() if intrans else getattr(local, "txn", None)
                place = self.model.place(None, p.namespace, p.name, txn=txn)
            else:
                place = self.model.place(p.ref.text, p.namespace, p.name)
        return _Target(p, place)

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


__all__ = ["ROOT_ENV", "TrinityFileSystem", "default_root", "latest_path", "resolve_root"]
