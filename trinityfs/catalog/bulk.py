"""Bulk load: create many namespaces, tables and views as one version, in bounded memory.

`Lakehouse.bulk_load()` returns a `BulkLoad`. Each create is checked against the base
version at once (like a transaction's), its definition file is written in batches as
the load goes, and only its (key, location) pair is kept, in a sorted spill on local
disk (trinityfs/txn/spill.py). `commit()` streams the sorted pairs into the root of the
new version: FORMAT.md keeps a version's messages in its root, so the root holds them
as Arrow columns (about 0.3 KB per object; no Python object per message), and the rest
of the tree is the latest version's, with its older root messages flushed down first.
Memory therefore grows only with those root columns, not with staging state.

Guarantees, as for a transaction:

- **Atomic**: nothing is visible until the root is created; a failure before that
  (an error, `abort()`, leaving a `with` block by an exception) deletes the definition
  files written so far and the lease.
- **Conflicts**: each created name must be absent at the base; when other commits land
  first, their changes are checked against the load (a key it creates, the other kind's
  key of a name it creates, a namespace it creates objects in being dropped) and the
  load is rebuilt on the latest root, else CommitConflictError names the object.
- **Expiration**: the load registers a lease, a distributed-transaction file whose id
  starts with ``bulk-``; expiration keeps its base version and sweeps nothing written
  since the lease began while it is live (trinityfs/lifecycle/expire.py). The lease is
  renewed while the load runs; a load whose lease lapsed (a process stopped longer than
  `lease_millis`) refuses to commit. A crashed load leaves files nothing references and
  a lease that lapses: expiration removes both after its grace period.
- **Verifiable**: definition files get content-hash names like any other.

Creates only (no replace, drop or rename); names created by the load are checked
against each other when it commits (duplicates, a table and a view sharing a name).

A **dry run** (`dry_run=True`) makes every check a real load makes, names, definitions,
duplicates and conflicts with the versions committed meanwhile, and writes nothing: no
lease, no definition file, no version. Its `commit()` returns the version a real load
would have become at that moment.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path

from trinityfs.catalog.bulk_root import build_bulk_root
from trinityfs.catalog.model import Kind
from trinityfs.catalog.names import check_new_name
from trinityfs.catalog.reader import CatalogReader
from trinityfs.catalog.writer import Definition, as_definition
from trinityfs.errors import (
    AlreadyExistsError,
    AmbiguousWriteError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    InvalidArgumentError,
    InvalidNameError,
    TransactionClosedError,
    TransactionExpiredError,
    TransactionNotFoundError,
    TrinityError,
)
from trinityfs.format.definitions import encode_definition
from trinityfs.format.keys import KeyCodec
from trinityfs.format.paths import new_definition_location, transaction_location
from trinityfs.format.trinitylake_pb2 import TransactionDef
from trinityfs.lifecycle import dtxn
from trinityfs.lifecycle.expire import BULK_LEASE_PREFIX
from trinityfs.lifecycle.lease import started_on_the_store_clock
from trinityfs.tree import Node
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.commute import describe_key
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import (
    LATE_RECHECK_SECONDS,
    BlockedRoot,
    confirm_root,
    create_root,
    settle_root,
    undo_if_gone,
    verify_before_writing,
)
from trinityfs.txn.snapshot import Snapshot
from trinityfs.txn.spill import DEFAULT_RUN_SIZE, SortedSpill

DEFAULT_LEASE_MILLIS = 10 * 60 * 1000
FILE_BATCH = 1024  # definition files written (and synced) together


class BulkLoad:
    """Creates staged in bounded memory and committed as one version; a context manager
    (leaving the block commits, an exception aborts)."""

    def __init__(
        self,
        engine: Engine,
        *,
        on_commit: Callable[[int], None] | None = None,
        lease_millis: int = DEFAULT_LEASE_MILLIS,
        spill_dir: str | Path | None = None,
        run_size: int = DEFAULT_RUN_SIZE,
        dry_run: bool = False,
    ):
        self.engine = engine
        self._on_commit = on_commit
        self.lease_millis = lease_millis
        self.dry_run = dry_run
        if engine.tree_verifier is not None:  # verify="tree": refuse before writing anything
            verify_before_writing(engine, engine.snapshot())
        # the spill first: a spill_dir that cannot be used must not leave a lease behind
        # (it would hold the base version back from expiration until it lapsed)
        self._spill = _open_spill(spill_dir, run_size)
        self._lease: TransactionDef | None = None
        try:
            self._take_lease()
        except BaseException:  # no lease and no spill left behind by a load never returned
            self._drop_lease()
            self._spill.close()
            raise
        self._written_nodes: list[str] = []  # node files the latest root built wrote
        self._files: dict[str, bytes] = {}
        self._namespaces: set[str] = set()  # created by this load (one entry per namespace)
        self._must_exist: set[str] = set()  # keys of base namespaces objects are created in
        self._kinds: set[str] = set()
        self.files_written = 0
        self.bytes_written = 0
        self.committed_version: int | None = None
        self.closed = False
        # (version, root bytes, root, base) of a create whose outcome is unknown
        self._unsettled: tuple[int, bytes, Node, Snapshot] | None = None

    def _take_lease(self) -> None:
        """The base version, held by a lease (a dry run reads the latest, holding nothing)."""
        if self.dry_run:
            self.base: Snapshot = self.engine.snapshot()
        else:
            lease = dtxn.begin(
                self.engine,
                ttl_millis=self.lease_millis,
                txn_id=f"{BULK_LEASE_PREFIX}{uuid.uuid4()}",
            )
            self._lease = started_on_the_store_clock(self.engine, lease.tdef)
            self.base = lease.base
        self._renewed_at = now_millis()
        self._renewed_mono = time.monotonic()
        self.reader = CatalogReader(
            self.base, self.engine.storage.read_immutable, self.base.version
        )
        self.keys: KeyCodec = self.reader.keys

    @property
    def lease_id(self) -> str | None:
        """The id of the lease file (None for a dry run, which takes no lease)."""
        return None if self._lease is None else self._lease.id

    @property
    def count(self) -> int:
        """Objects staged so far."""
        return self._spill.count

    # -- staging ----------------------------------------------------------------------

    def create_namespace(self, namespace: str, properties: dict[str, str] | None = None) -> None:
        self._check_open()
        self.reader._valid("namespace", namespace)
        check_new_name("namespace", namespace, self._exists_at_base(None))
        if self.reader.namespace_exists(namespace):
            raise AlreadyExistsError(f"namespace {namespace!r} already exists")
        if namespace in self._namespaces:
            raise AlreadyExistsError(f"namespace {namespace!r} is already created by this load")
        msg = as_definition("namespace", {"properties": dict(properties or {})})
        self._namespaces.add(namespace)
        self._stage("namespace", self.keys.namespace_key(namespace), namespace, None, msg)

    def create_table(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("table", namespace, name, definition)

    def create_view(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("view", namespace, name, definition)

    def create(self, kind: Kind, namespace: str, name: str, definition: Definition = None) -> None:
        """Stage the creation of a table or view (checked against the base version)."""
        self._check_open()
        if kind not in ("table", "view"):
            raise InvalidNameError(f"a bulk load creates tables and views, not {kind!r}")
        self.reader._valid(kind, name)
        if not isinstance(namespace, str):
            raise InvalidNameError(f"a namespace name is a str, not {type(namespace).__name__}")
        if namespace not in self._namespaces:
            self.reader._namespace_location(namespace)  # NamespaceNotFoundError
            self._must_exist.add(self.keys.namespace_key(namespace))
            existing = self.reader.object_kind(namespace, name)
            if existing is not None:
                raise AlreadyExistsError(f"{existing} {namespace}.{name} already exists")
            check_new_name(kind, name, self._exists_at_base(namespace))
        else:
            check_new_name(kind, name)
        msg = as_definition(kind, definition)
        self._stage(kind, self.keys.object_key(kind, namespace, name), namespace, name, msg)

    def _exists_at_base(self, namespace: str | None) -> Callable[[str], bool]:
        def exists(other: str) -> bool:
            try:
                if namespace is None:
                    return self.reader.namespace_exists(other)
                return self.reader.object_kind(namespace, other) is not None
            except InvalidNameError:
                return False

        return exists

    def _stage(self, kind: str, key: str, namespace: str, name: str | None, msg) -> None:
        self._renew_lease()  # a caller that stages slowly (a pipe) writes no batch for long
        if not msg.id:
            msg.id = str(uuid.uuid4())
        data = encode_definition(msg)
        location = new_definition_location(kind, namespace, name, data)
        self._spill.add(key, location)
        self._kinds.add(kind)
        if self.dry_run:
            return
        self._files[location] = data
        if len(self._files) >= FILE_BATCH:
            self._write_files()

    def _write_files(self) -> None:
        if not self._files:
            return
        self._renew_lease()  # before writing: files must never outlive a lapsed lease
        storage = self.engine.storage
        storage.write_immutable_many(self._files)
        for location in self._files:  # nobody reads them back now: keep the cache small
            storage.forget(location)
        self.files_written += len(self._files)
        self.bytes_written += sum(len(d) for d in self._files.values())
        self._files = {}

    # -- the lease --------------------------------------------------------------------

    def _renew_lease(self, *, force: bool = False) -> None:
        """Keep the lease live: refuse once it lapsed, extend it every third of its TTL."""
        if self._lease is None:
            return  # a dry run holds no lease
        now = now_millis()
        if now >= self._lease.expire_at_millis:
            raise TransactionExpiredError(
                f"bulk load lease {self.lease_id} lapsed at {self._lease.expire_at_millis} "
                f"({now - self._lease.expire_at_millis} ms ago; the process was stopped "
                "longer than lease_millis): expiration may have removed its files; nothing "
                "was committed"
            )
        if not force and now - self._renewed_at < self.lease_millis // 3:
            return
        storage = self.engine.storage
        location = transaction_location(self.lease_id)
        if not storage.exists(location):
            raise TransactionNotFoundError(
                f"bulk load lease {self.lease_id} was removed (committed or aborted as a "
                "distributed transaction elsewhere?); nothing was committed"
            )
        lease = TransactionDef()
        lease.CopyFrom(self._lease)
        lease.expire_at_millis = now + self.lease_millis
        storage.write(location, dtxn.encode_transaction_def(lease))
        self._lease = lease
        self._renewed_at = now
        self._renewed_mono = time.monotonic()

    def _drop_lease(self) -> None:
        if self._lease is None:
            return
        with contextlib.suppress(TrinityError):  # else it lapses; expiration removes it
            self.engine.storage.delete(transaction_location(self.lease_id))

    # -- commit -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            if self.committed_version is not None:
                raise TransactionClosedError(
                    f"the bulk load was committed as version {self.committed_version}"
                )
            raise TransactionClosedError("the bulk load is already committed or aborted")

    def __enter__(self) -> BulkLoad:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        elif not self.closed:
            self.abort()

    def commit(self) -> int:
        """Commit every staged create as one new version; returns it.

        Raises CommitConflictError (nothing committed, the load aborted) when another
        commit took a name or dropped a namespace it needs; AlreadyExistsError when
        the load itself creates a name twice. A dry run makes the same checks, commits
        nothing and returns the version a real load would have become.
        """
        if self.dry_run:
            return self._check_only()
        if self._unsettled is not None:
            landed = self._settle()
            if landed is not None:
                return landed
        self._check_open()
        try:
            self._write_files()
            if self._spill.count == 0:
                self._finish(None)
                return self.base.version
            self._check_own_names()
            return self._publish()
        except AmbiguousWriteError:
            raise  # the outcome is unknown: keep files and lease; commit() again settles
        except BaseException:
            if not self.closed:
                self.abort()
            raise

    def _check_only(self) -> int:
        """The checks of commit() without its writes (a dry run)."""
        self._check_open()
        try:
            if self._spill.count == 0:
                return self.base.version
            self._check_own_names()
            latest = self.engine.roots.latest_version()
            if latest > self.base.version:
                self._validate(self.base.version, latest)
            return latest + 1
        finally:
            self.closed = True
            self._spill.close()

    def _publish(self) -> int:
        engine = self.engine
        deadline = time.monotonic() + commit_window_millis(self.base.lakehouse_def) / 1000
        base = self.base
        lost = 0
        blocked = BlockedRoot()  # lost creates whose winner never shows: bounded
        tried: int | None = None
        while True:
            latest = engine.roots.latest_version()
            if tried is not None:  # the create of `tried` lost: its winner must show
                blocked.lost(tried, latest, deadline)
            if latest > base.version:
                self._validate(base.version, latest)
                base = engine.snapshot(latest)
            version = base.version + 1
            data, root, self._written_nodes = build_bulk_root(
                self.engine, base, version, self._spill.sorted_pairs
            )
            self._renew_lease(force=True)  # alive and still ours right before the create
            if time.monotonic() > deadline:
                raise CommitRetriesExhaustedError(
                    f"bulk load gave up on version {version} after {lost} lost races; "
                    "nothing was committed"
                )
            # Unsettled until the outcome is known: a KeyboardInterrupt after the root
            # landed (inside create_root, or before _finish) makes abort() settle first
            # instead of deleting the files of a committed version.
            self._unsettled = (version, data, root, base)
            try:
                created = create_root(engine, version, data, root, remember=False)
            except AmbiguousWriteError:
                raise
            except Exception:
                self._unsettled = None  # a definite outcome: nothing stays committed
                raise
            if created:
                self._check_landed_in_lease(version, base)
                self._finish(version)
                return version
            self._unsettled = None
            lost += 1
            tried = version
            time.sleep(min(0.5, 0.005 * 2**lost) * random.random())

    def _settle(self) -> int | None:
        assert self._unsettled is not None
        version, data, root, base = self._unsettled
        if not settle_root(self.engine, version, data):  # AmbiguousWriteError again
            self._unsettled = None
            return None
        confirm_root(self.engine, version, root, remember=False)  # as a transaction does
        self._check_landed_in_lease(version, base)
        self._unsettled = None
        self._finish(version)
        return version

    def _check_landed_in_lease(self, version: int, base: Snapshot) -> None:
        """Our root landed: when its lease had lapsed by then (a pause between the last
        renewal and the create, by either clock), an expiration may have taken the lease
        for dead and swept the load's files. Once every delete decided before the root
        landed was issued (trinityfs/lifecycle/gc.py), check them; the load holds no
        definition bytes to write back, so one gone undoes the version
        (TransactionExpiredError, the load closed). In time: two clock reads."""
        assert self._lease is not None
        lapsed_mono = time.monotonic() - self._renewed_mono >= self.lease_millis / 1000
        if not lapsed_mono and now_millis() < self._lease.expire_at_millis:
            return
        _await_sweeps_in_flight(LATE_RECHECK_SECONDS)
        pairs = self._spill.sorted_pairs()
        files = chain(self._written_nodes, (location for _key, location in pairs))
        try:
            what = f"bulk load (its lease {self.lease_id} lapsed)"
            undo_if_gone(self.engine, version, base, files, what)
        except TransactionExpiredError:
            self._finish(None)  # nothing stays committed; its files are not deleted
            raise

    def _finish(self, version: int | None) -> None:
        self.committed_version = version
        self.closed = True
        self._unsettled = None
        self._drop_lease()
        self._spill.close()
        if version is not None and self._on_commit is not None:
            self._on_commit(version)

    def abort(self) -> None:
        """Forget the load: delete the definition files written so far and the lease.

        A load whose root create had an unknown outcome is settled first: if it landed,
        TransactionClosedError says so; while that cannot be told (AmbiguousWriteError)
        nothing is deleted (FORMAT.md: never delete files of an unknown outcome).
        """
        if self.closed:
            if self.committed_version is not None:
                raise TransactionClosedError(
                    f"the bulk load was committed as version {self.committed_version}; "
                    "it cannot be aborted"
                )
            return
        if self._unsettled is not None:
            landed = self._settle()
            if landed is not None:
                raise TransactionClosedError(
                    f"the bulk load was committed as version {landed} (its outcome had "
                    "been unknown)"
                )
        self.closed = True
        self._files = {}
        if self.dry_run:  # it wrote nothing
            self._spill.close()
            return
        storage = self.engine.storage
        try:
            batch: list[str] = []
            for _key, location in self._spill.sorted_pairs():
                batch.append(location)
                if len(batch) >= FILE_BATCH:
                    _delete_all(storage, batch)
                    batch = []
            _delete_all(storage, batch)
        finally:
            self._spill.close()
            self._drop_lease()

    # -- checks -----------------------------------------------------------------------

    def _check_own_names(self) -> None:
        """Names created twice by this load, or as both a table and a view."""
        previous = None
        for key, _location in self._spill.sorted_pairs():
            if key == previous:
                raise AlreadyExistsError(
                    f"{describe_key(key, self.keys)} is created twice by this bulk load"
                )
            previous = key
        if {"table", "view"} <= self._kinds:
            tables = self._names_of("table")
            views = self._names_of("view")
            view = next(views, None)
            for table in tables:
                while view is not None and view < table:
                    view = next(views, None)
                if view == table:
                    raise AlreadyExistsError(
                        f"{table[0]}.{table[1]} is created as both a table and a view by "
                        "this bulk load"
                    )

    def _names_of(self, kind: str) -> Iterator[tuple[str, str]]:
        prefix = self.keys.kind_prefix(kind)
        for key, _location in self._spill.sorted_pairs():
            if key.startswith(prefix):
                decoded = self.keys.decode(key)
                yield decoded.namespace, decoded.name

    def _validate(self, base_version: int, latest: int) -> None:
        """Check the changes of versions base_version+1..latest against the load."""
        watched: dict[str, tuple[int, str]] = {}  # our possible key -> (version, changed key)
        for version in range(base_version + 1, latest + 1):
            for key, location in self.engine.changes(version).items():
                if key in self._must_exist and location is None:
                    raise CommitConflictError(
                        key,
                        version,
                        f"commit conflict: {describe_key(key, self.keys)} was dropped by "
                        f"version {version}",
                    )
                for mine in self._claims_of(key):
                    watched.setdefault(mine, (version, key))
        if not watched:
            return
        for key, _location in self._spill.sorted_pairs():
            hit = watched.get(key)
            if hit is not None:
                version, theirs = hit
                raise CommitConflictError(
                    theirs,
                    version,
                    f"commit conflict: {describe_key(theirs, self.keys)}, which this bulk "
                    f"load creates, was changed by version {version}",
                )

    def _claims_of(self, key: str) -> list[str]:
        """The keys of this load a change of `key` would conflict with."""
        try:
            decoded = self.keys.decode(key)
        except TrinityError:
            return []  # the lakehouse_def row, or a key of another kind
        if decoded.kind == "namespace":
            return [key]
        out = []
        for kind in ("table", "view"):
            with contextlib.suppress(TrinityError):  # too long for that kind: no clash
                out.append(self.keys.object_key(kind, decoded.namespace, decoded.name))
        return out


def _open_spill(spill_dir: str | Path | None, run_size: int) -> SortedSpill:
    """The load's sorted spill in `spill_dir` (the system's temporary directory by
    default); InvalidArgumentError naming the directory when it cannot hold one."""
    if spill_dir is not None and not isinstance(spill_dir, str | Path):
        raise InvalidArgumentError(f"spill_dir must be a directory path, got {spill_dir!r}")
    try:
        return SortedSpill(spill_dir, run_size)
    except (OSError, ValueError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InvalidArgumentError(
            f"spill_dir {str(spill_dir)!r} cannot hold the bulk load's spill: {reason}"
        ) from None


def _await_sweeps_in_flight(seconds: float) -> None:
    """Wait before a late root checks its files (tests replace it)."""
    time.sleep(seconds)


def _delete_all(storage, locations: list[str]) -> None:
    for location in locations:
        with contextlib.suppress(TrinityError):  # else expiration removes it later
            storage.delete(location)
