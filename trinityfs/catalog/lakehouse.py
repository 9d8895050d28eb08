"""`Lakehouse`: the one entry point of the catalog API.

Open or create a lakehouse at a URL, read any version, change it in transactions, and
walk its history (versions, time travel, change sets, diffs, rollback).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from trinityfs.catalog import versions as _versions
from trinityfs.catalog.bulk import BulkLoad
from trinityfs.catalog.config import verify_mode
from trinityfs.catalog.content import RenderCache
from trinityfs.catalog.distributed import DistributedTransaction
from trinityfs.catalog.expired import (
    check_not_expired,
    load_root,
)
from trinityfs.catalog.freshness import Freshness, LatestTracker
from trinityfs.catalog.history import History
from trinityfs.catalog.model import Change, Kind, VersionInfo
from trinityfs.catalog.names import check_export_lookup_name, check_new_name
from trinityfs.catalog.primitives import FrontEndPrimitives
from trinityfs.catalog.shortcuts import NothingChanged, begins_unprobed
from trinityfs.catalog.snapshot import CatalogSnapshot
from trinityfs.catalog.writer import CatalogTransaction, Definition
from trinityfs.errors import (
    AlreadyExistsError,
    CorruptFileError,
    InvalidArgumentError,
    LakehouseNotFoundError,
    StorageFileNotFoundError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import (
    encode_definition,
    new_lakehouse_def,
    parse_isolation_level,
    validate_lakehouse_def,
)
from trinityfs.format.paths import check_version, new_lakehouse_def_location
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle import (
    DroppedExport,
    ExpireReport,
    ExportInfo,
    ExportProgress,
    FsckReport,
)
from trinityfs.lifecycle import defrepair as _defrepair
from trinityfs.lifecycle import dtxn as _dtxn
from trinityfs.lifecycle import exports as _exports
from trinityfs.lifecycle.defrepair import RepairPreview
from trinityfs.lifecycle.expire import expire as _expire_versions
from trinityfs.lifecycle.fsck import fsck as _fsck_lakehouse
from trinityfs.storage import Storage
from trinityfs.tree import TreeStats, check_tree
from trinityfs.tree.budget import new_lakehouse_options
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import create_first
from trinityfs.txn.publish import rollback as _rollback
from trinityfs.txn.snapshot import Snapshot
from trinityfs.txn.transaction import Transaction
from trinityfs.txn.verify import VERIFY_READS, VERIFY_TREE, TreeVerifier, parse_verify_mode


class Lakehouse(FrontEndPrimitives):
    """A TrinityLake lakehouse at a storage URL (local directory, memory://, s3://).

    `freshness` is the policy for "latest" (see catalog/freshness.py): by default every
    `latest_version()` asks storage; `Freshness(max_staleness_seconds=N)` lets answers
    up to N seconds old come from memory with no storage request.

    `verify` is what a commit verifies (trinityfs/txn/verify.py): "reads" (what it
    reads; untouched files are carried by content-hash name) or "tree" (every file of
    the tree it builds on, once per process, before writing). None: $TRINITYFS_VERIFY,
    then fsspec's [trinity] verify, else "reads" (`trinityfs.catalog.config.verify_mode`).
    """

    def __init__(
        self, storage: Storage, *, freshness: Freshness | None = None, verify: str | None = None
    ):
        self.storage = storage
        self.engine = Engine(storage)
        self.verify = verify_mode(verify)[0]
        self.freshness = freshness or Freshness()
        self._latest = LatestTracker()
        self._last_tree: Snapshot | None = None  # see _tree_at
        self._history = History(self)
        self._renders = RenderCache()
        self._order: int | None = None
        self._shortcut = threading.local()  # the unprobed base of a running shortcut

    # -- opening --------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        url: str,
        *,
        storage_options: dict[str, Any] | None = None,
        exist_ok: bool = False,
        verify: str | None = None,
        **options: Any,
    ) -> Lakehouse:
        """Create a lakehouse (version 0, empty) with LakehouseDef `options`.

        Options: order, namespace_name_max_size_bytes, table_name_max_size_bytes,
        view_name_max_size_bytes, node_file_max_size_bytes, txn_ttl_millis,
        txn_isolation_level ("SNAPSHOT" or "SERIALIZABLE"), properties.
        """
        storage = Storage(url, storage_options)
        lakehouse = cls(storage, verify=verify)
        if lakehouse._has_root():
            if exist_ok:
                return lakehouse
            raise AlreadyExistsError(f"a lakehouse already exists at {storage.url}")
        ldef = new_lakehouse_def(**new_lakehouse_options(options))
        validate_lakehouse_def(ldef)
        ldef_bytes = encode_definition(ldef)
        ldef_location = new_lakehouse_def_location(ldef_bytes)
        storage.write_immutable(ldef_location, ldef_bytes)
        created = create_first(lakehouse.engine, ldef_location, ldef.order)
        if not created and not exist_ok:
            raise AlreadyExistsError(f"a lakehouse already exists at {storage.url}")
        return lakehouse

    @classmethod
    def open(
        cls,
        url: str,
        *,
        storage_options: dict[str, Any] | None = None,
        freshness: Freshness | None = None,
        verify: str | None = None,
    ) -> Lakehouse:
        """Open an existing lakehouse; LakehouseNotFoundError if there is none."""
        lakehouse = cls(Storage(url, storage_options), freshness=freshness, verify=verify)
        lakehouse.latest_version(fresh=True)  # fails early with a clear error
        return lakehouse

    def _has_root(self) -> bool:
        try:
            self.engine.roots.latest_version()
        except LakehouseNotFoundError:
            return False
        return True

    @property
    def url(self) -> str:
        return self.storage.url

    @property
    def verify(self) -> str:
        """What a commit verifies: "reads" or "tree" (settable; see the class doc)."""
        return VERIFY_READS if self.engine.tree_verifier is None else VERIFY_TREE

    @verify.setter
    def verify(self, mode: str) -> None:
        mode = parse_verify_mode(mode)
        if mode == VERIFY_READS:
            self.engine.tree_verifier = None
        elif self.engine.tree_verifier is None:
            self.engine.tree_verifier = TreeVerifier(self.storage)

    # -- reading --------------------------------------------------------------------

    def latest_version(self, *, fresh: bool = False) -> int:
        """The latest version: from memory within the freshness bound (unless `fresh`),
        else from storage."""
        if not fresh and self.freshness.max_staleness_seconds > 0:
            remembered = self._latest.remembered(self.freshness)
            if remembered is not None:
                return remembered
        return self._latest.checked(self.engine.roots.latest_version())

    def _saw(self, version: int) -> None:
        self._latest.saw(version)

    def lakehouse_def(self, version: int | None = None) -> LakehouseDef:
        return self.engine.snapshot(
            self.latest_version() if version is None else check_version(version)
        ).lakehouse_def

    def at(
        self,
        version: int | None = None,
        *,
        timestamp: datetime | int | None = None,
        export: str | None = None,
    ) -> CatalogSnapshot:
        """A read-only view at `version`, at the version current at `timestamp`, or of
        the snapshot export named `export`."""
        if export is not None:
            return self._at_export(export, version, timestamp)
        if timestamp is not None:
            version = self.version_at(timestamp)
        if version is None:
            version = self.latest_version()
            return CatalogSnapshot(self._tree_at(version), self.storage, self.oldest_version)
        tree = self._tree_at(version)
        snap = CatalogSnapshot(tree, self.storage, self.oldest_version)
        if not self._surely_readable(tree):
            check_not_expired(version, self.oldest_version)
            snap.readable_checked_at = time.monotonic()
        return snap

    def _tree_at(self, version: int) -> Snapshot:
        """`engine.snapshot(version)` for a read-only view; the last one is reused while
        the root store still holds the same root (a warm reader asks for the same
        version again and again: its lakehouse definition is not looked up again)."""
        root = load_root(self.engine.roots, version)
        last = self._last_tree
        if last is not None and last.root is root and last.version == version:
            return last
        tree = self.engine.snapshot_of_root(version, root)
        self._last_tree = tree
        return tree

    def check_readable(self, snap: CatalogSnapshot) -> None:
        """VersionNotFoundError when `snap`'s version was expired since it was opened: a
        view a front end keeps is checked on every use as `at` checks a new one (the
        oldest marker; nothing for the versions `_surely_readable` lets pass, nor within
        the opt-in staleness bound of the last check of this view)."""
        if self._surely_readable(snap.snapshot):
            return
        bound = self.freshness.max_staleness_seconds
        now = time.monotonic()
        if bound > 0 and now - snap.readable_checked_at <= bound:
            return
        check_not_expired(snap.version, self.oldest_version)
        snap.readable_checked_at = now

    def _surely_readable(self, tree: Snapshot) -> bool:
        """True when no expiration can have removed `tree`'s version, so the oldest
        marker need not be read (catalog/expired.py): its root is younger than half the
        commit window, or it is at or above the latest version confirmed that recently."""
        window = commit_window_millis(tree.lakehouse_def) / 2
        if now_millis() - tree.created_at_millis < window:
            return True
        latest = self._latest.confirmed_within(window / 1000)
        return latest is not None and tree.version >= latest

    def snapshot(self) -> CatalogSnapshot:
        """A consistent read-only view of the latest version."""
        return self.at()

    def transaction(
        self, *, isolation: str | int | None = None, version: int | None = None
    ) -> CatalogTransaction:
        """A transaction at the latest version (or at `version`); a context manager."""
        level = None if isolation is None else _isolation_level(isolation)
        if version is None:
            version = self.latest_version()
        txn = Transaction(self.engine, self.engine.snapshot(check_version(version)), level)
        return CatalogTransaction(txn, on_commit=self._saw)

    @contextlib.contextmanager
    def _one(self) -> Iterator[CatalogTransaction]:
        base = getattr(self._shortcut, "base", None)  # set by @begins_unprobed
        with self.transaction(version=base) as txn:
            yield txn

    # -- single-change shortcuts (each is one commit) -------------------------------

    @begins_unprobed
    def create_namespace(self, namespace: str, properties: dict[str, str] | None = None) -> int:
        with self._one() as t:
            t.create_namespace(namespace, properties)
        return self._result(t)

    @begins_unprobed
    def drop_namespace(self, namespace: str, *, cascade: bool = False) -> int:
        with self._one() as t:
            t.drop_namespace(namespace, cascade=cascade)
        return self._result(t)

    @begins_unprobed
    def set_namespace_properties(
        self, namespace: str, updates: dict[str, str] | None = None, removals=()
    ) -> int:
        """Set and remove some properties; one commit, none when nothing changes (then
        the version the namespace was read at is returned)."""
        with self._one() as t:
            t.set_namespace_properties(namespace, updates, removals)
        return self._result(t)

    @begins_unprobed
    def create_table(self, namespace: str, name: str, definition: Definition = None) -> int:
        with self._one() as t:
            t.create_table(namespace, name, definition)
        return self._result(t)

    @begins_unprobed
    def replace_table(self, namespace: str, name: str, definition: Definition) -> int:
        with self._one() as t:
            t.replace_table(namespace, name, definition)
        return self._result(t)

    @begins_unprobed
    def drop_table(self, namespace: str, name: str) -> int:
        with self._one() as t:
            t.drop_table(namespace, name)
        return self._result(t)

    @begins_unprobed
    def rename_table(self, namespace: str, name: str, new_namespace: str, new_name: str) -> int:
        with self._one() as t:
            t.rename_table(namespace, name, new_namespace, new_name)
        return self._result(t)

    @begins_unprobed
    def create_view(self, namespace: str, name: str, definition: Definition = None) -> int:
        with self._one() as t:
            t.create_view(namespace, name, definition)
        return self._result(t)

    @begins_unprobed
    def replace_view(self, namespace: str, name: str, definition: Definition) -> int:
        with self._one() as t:
            t.replace_view(namespace, name, definition)
        return self._result(t)

    @begins_unprobed
    def drop_view(self, namespace: str, name: str) -> int:
        with self._one() as t:
            t.drop_view(namespace, name)
        return self._result(t)

    @begins_unprobed
    def rename_view(self, namespace: str, name: str, new_namespace: str, new_name: str) -> int:
        with self._one() as t:
            t.rename_view(namespace, name, new_namespace, new_name)
        return self._result(t)

    def _result(self, t: CatalogTransaction) -> int:
        """The version a one-change shortcut made; when its change changed nothing (a
        rename onto itself, properties set to their values) nothing is committed and
        this is the version it was checked against, which must be the latest: on an
        unprobed base @begins_unprobed checks that, else redoes the change."""
        committed = t.txn.committed_version
        if committed is not None:
            return committed
        if getattr(self._shortcut, "base", None) is not None:
            raise NothingChanged(t.txn.base_version)
        return t.txn.base_version

    # -- single reads at the latest version -----------------------------------------

    def list_namespaces(self, start_after: str | None = None, limit: int | None = None):
        return self.snapshot().list_namespaces(start_after, limit)

    def describe_namespace(self, namespace: str):
        return self.snapshot().describe_namespace(namespace)

    def list_tables(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.snapshot().list_tables(namespace, start_after, limit)

    def list_views(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.snapshot().list_views(namespace, start_after, limit)

    def describe_table(self, namespace: str, name: str):
        return self.snapshot().describe_table(namespace, name)

    def describe_view(self, namespace: str, name: str):
        return self.snapshot().describe_view(namespace, name)

    # -- history --------------------------------------------------------------------

    def oldest_version(self) -> int:
        return self.engine.roots.oldest_version()

    def version_info(self, version: int) -> VersionInfo:
        return _versions.version_info(self.engine, version)

    def versions(self, start: int | None = None, end: int | None = None) -> list[VersionInfo]:
        """Readable versions from `start` (oldest) to `end` (latest), oldest first.

        Without `start`, versions an expiration removes while this lists them are left
        out (they are no longer readable); an explicit `start` that expired is an error.
        """
        first = self.oldest_version() if start is None else _versions.checked_version(start)
        end = self.latest_version() if end is None else _versions.checked_version(end)
        out: list[VersionInfo] = []
        for version in range(first, end + 1):
            try:
                out.append(self.version_info(version))
            except VersionNotFoundError:  # expired meanwhile? (a lost root is corrupt)
                if start is not None or version >= self.oldest_version():
                    raise
        return out

    def version_at(self, timestamp: datetime | int) -> int:
        """The last version committed at or before `timestamp` (datetime or epoch millis)."""
        return _versions.version_at(self.engine, timestamp, self.latest_version)

    def changes(self, version: int) -> list[Change]:
        """What `version` changed, from its root's own messages."""
        return _versions.changes(self.engine, version)

    def diff(self, from_version: int, to_version: int) -> list[Change]:
        """Objects created, replaced or dropped going from one version to another."""
        return _versions.diff(self.engine, from_version, to_version)

    def rollback(
        self,
        version: int,
        *,
        expected_latest: int | None = None,
        drop_refused_exports: bool = False,
    ) -> int:
        """Roll forward to a new version whose tree equals `version`'s; returns it (the
        latest version, nothing committed, when its tree equals `version`'s already).

        `expected_latest`: the latest version the caller saw (a dry run, a diff); when
        another is latest at commit time, CommitConflictError naming it and nothing is
        committed (checked by the commit's create itself, not by a read before it).
        VersionNotFoundError when `version` is (or gets, while this runs) expired.

        A latest definition that fails validation is repaired, keeping its exports
        (lifecycle/defrepair.py); LakehouseDefInvalidError when that is impossible.
        `drop_refused_exports`: export records the checks refuse (no reader can use
        them) are dropped by the repair, each named in its warning, instead of refusing.
        """
        version = _versions.checked_version(version)
        if expected_latest is not None:
            expected_latest = _versions.checked_version(expected_latest)
        try:
            landed = _rollback(self.engine, version, expected_latest=expected_latest)
        except (CorruptFileError, StorageFileNotFoundError):
            repaired = _defrepair.rollback_over_invalid_definition(
                self.engine,
                version,
                expected_latest=expected_latest,
                drop_refused_exports=drop_refused_exports,
            )
            # None: the latest definition passes (another process repaired it meanwhile,
            # or the error was about something else): the plain rollback once more
            landed = (
                _rollback(self.engine, version, expected_latest=expected_latest)
                if repaired is None
                else repaired
            )
        self._saw(landed)
        return landed

    def rollback_repair_preview(
        self, version: int, *, drop_refused_exports: bool = False
    ) -> RepairPreview | None:
        """What `rollback(version)` would repair in the latest definition, writing
        nothing (a dry run): None when that definition passes the checks."""
        return _defrepair.repair_preview(
            self.engine,
            _versions.checked_version(version),
            drop_refused_exports=bool(drop_refused_exports),
        )

    # -- verification ---------------------------------------------------------------

    def check(self, version: int | None = None) -> TreeStats:
        """Verify every tree invariant of a version (latest by default)."""
        snap = self.engine.snapshot(None if version is None else check_version(version))
        return check_tree(
            snap.nodes,
            snap.root,
            order=snap.lakehouse_def.order,
            budget=self.engine.budget(snap.lakehouse_def),
            version=snap.version,
        )

    # -- lifecycle (trinityfs/lifecycle: exports, expiration, distributed txns, fsck) ---

    def export(
        self,
        name: str,
        version: int | None = None,
        mode: str = "minimal",
        depth: int | None = None,
        progress: Callable[[ExportProgress], None] | None = None,
    ) -> ExportInfo:
        """Export `version` (latest by default) as `name`: mode "minimal", "partial"
        (to `depth`, default 1) or "full" (a standalone lakehouse in _exports/<name>/).
        The name follows the catalog's policy for new names (NFC, not . or ..)."""
        if isinstance(name, str):
            check_new_name("export", name, lambda other: other in self._export_names())
        return _exports.create_export(self.engine, name, version, mode, depth, progress)

    def _export_names(self) -> set[str]:
        return {info.name for info in self.exports()}

    def exports(self) -> list[ExportInfo]:
        """The exports recorded in the latest LakehouseDef, by name."""
        return _exports.list_exports(self.engine)

    def drop_export(self, name: str) -> DroppedExport:
        """Remove an export's record (a new version), then its files."""
        return _exports.drop_export(self.engine, name)

    def _at_export(
        self, name: str, version: int | None, timestamp: datetime | int | None
    ) -> CatalogSnapshot:
        if version is not None or timestamp is not None:
            raise InvalidArgumentError("give a version, a timestamp or an export, not several")
        check_export_lookup_name(name)
        snapshot, storage = _exports.open_export(self.engine, name)
        return CatalogSnapshot(snapshot, storage)

    def expire(
        self,
        max_age_millis: int | None = None,
        min_versions: int | None = None,
        dry_run: bool = False,
        *,
        grace_millis: int | None = None,
        future_stamps: str = "keep",
    ) -> ExpireReport:
        """Expire old versions and collect unreachable files (retention from the
        LakehouseDef's properties unless given; grace defaults to txn_ttl_millis).
        `future_stamps="store-time"` ages versions stamped in the future by the store's
        time of their roots instead of keeping them until this clock passes the stamps."""
        return _expire_versions(
            self.engine,
            max_age_millis,
            min_versions,
            dry_run,
            grace_millis=grace_millis,
            future_stamps=future_stamps,
        )

    def begin_distributed(
        self,
        *,
        isolation: str | int | None = None,
        ttl_millis: int | None = None,
        txn_id: str | None = None,
    ) -> DistributedTransaction:
        """Begin a distributed transaction at the latest version (stored at once)."""
        txn = _dtxn.begin(self.engine, isolation=isolation, ttl_millis=ttl_millis, txn_id=txn_id)
        return DistributedTransaction(txn)

    def bulk_load(
        self,
        *,
        lease_millis: int | None = None,
        spill_dir: str | None = None,
        dry_run: bool = False,
    ) -> BulkLoad:
        """Create many namespaces, tables and views as one version, with memory that
        does not grow with the staged objects (trinityfs/catalog/bulk.py); a context
        manager: leaving the block commits, an exception aborts. `dry_run=True` makes
        every check and writes nothing."""
        options = {} if lease_millis is None else {"lease_millis": lease_millis}
        return BulkLoad(
            self.engine, on_commit=self._saw, spill_dir=spill_dir, dry_run=dry_run, **options
        )

    def load_distributed(self, txn_id: str) -> DistributedTransaction:
        """A distributed transaction as of its last save (TransactionExpiredError after
        expiry, TransactionNotFoundError once committed or aborted)."""
        return DistributedTransaction(_dtxn.load(self.engine, txn_id))

    def fsck(self) -> FsckReport:
        """Check every kept version, export and transaction; list orphans."""
        return _fsck_lakehouse(self.engine)

    @classmethod
    def fsck_at(cls, url: str, *, storage_options: dict[str, Any] | None = None) -> FsckReport:
        """`fsck` of the lakehouse at `url` without `open`'s check, which refuses a
        malformed or symlinked oldest marker: fsck reports such a marker as a finding
        and checks everything else (it reads, never writes)."""
        return cls(Storage(url, storage_options)).fsck()


def _isolation_level(isolation: str | int) -> int:
    try:
        return parse_isolation_level(isolation)
    except (InvalidArgumentError, ValueError):
        raise InvalidArgumentError(
            f"unknown isolation level {isolation!r}: use SNAPSHOT or SERIALIZABLE"
        ) from None


__all__ = ["CatalogSnapshot", "Kind", "Lakehouse"]
