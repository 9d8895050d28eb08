"""A transaction: reads at one base version, buffered writes, optimistic commit.

Commit writes the new definition and node files, then creates the root of the next
version if absent. Losing that race is normal: the transaction checks what the winners
changed against what it depends on, and either replays its changes onto the new latest
root or raises a CommitConflictError naming the key and the winning version.
"""

from __future__ import annotations

import logging
import random
import time

from trinityfs.errors import (
    AmbiguousWriteError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    StorageError,
    TransactionClosedError,
    TransactionExpiredError,
)
from trinityfs.format.definitions import encode_definition
from trinityfs.format.nodefile import encode_node
from trinityfs.format.paths import new_lakehouse_def_location, root_node_file
from trinityfs.format.trinitylake_pb2 import IsolationLevel, LakehouseDef
from trinityfs.tree import TreeWriter
from trinityfs.txn.conflicts import LAKEHOUSE_DEF_KEY, Dependencies
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.snapshot import Snapshot, range_of_prefix

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 64
BACKOFF_BASE_SECONDS = 0.005
BACKOFF_CAP_SECONDS = 0.5


class Transaction:
    """Changes to one lakehouse, committed atomically as one new version."""

    def __init__(self, engine: Engine, base: Snapshot, isolation: int | None = None):
        self.engine = engine
        self.base = base
        self.isolation = base.lakehouse_def.txn_isolation_level if isolation is None else isolation
        self.pending: dict[str, str | None] = {}
        self.files: dict[str, bytes] = {}
        self.deps = Dependencies()
        self.new_lakehouse_def: LakehouseDef | None = None
        self.committed_version: int | None = None
        self.closed = False
        self.attempts = 0
        self.replays = 0
        self.began_at_millis = now_millis()

    # -- reads ----------------------------------------------------------------------

    @property
    def base_version(self) -> int:
        return self.base.version

    @property
    def lakehouse_def(self) -> LakehouseDef:
        return self.new_lakehouse_def or self.base.lakehouse_def

    def get(self, key: str) -> str | None:
        """Read-your-writes lookup of `key`'s definition location."""
        if key in self.pending:
            return self.pending[key]
        self.deps.read_keys.add(key)
        return self.base.get(key)

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]:
        """Keys with `prefix` (after `after`, at most `limit`), pending changes applied."""
        self.deps.read_ranges.append(range_of_prefix(prefix))
        mine = sorted(
            (k, v)
            for k, v in self.pending.items()
            if k.startswith(prefix) and (after is None or k > after)
        )
        if not mine:
            return self.base.scan_prefix(prefix, after, limit)
        out: list[tuple[str, str]] = []
        base_iter = iter(self.base.scan_prefix(prefix, after, None))
        merged = dict(base_iter)
        for k, v in mine:
            if v is None:
                merged.pop(k, None)
            else:
                merged[k] = v
        for k in sorted(merged):
            if limit is not None and len(out) >= limit:
                break
            out.append((k, merged[k]))
        return out

    def read_file(self, location: str) -> bytes:
        """An immutable definition file (one written by this transaction included)."""
        if location in self.files:
            return self.files[location]
        return self.engine.storage.read_immutable(location)

    # -- writes ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise TransactionClosedError("the transaction is already committed or aborted")

    def put(self, key: str, location: str, data: bytes) -> None:
        """Point `key` at a new definition file `location` holding `data`."""
        self._check_open()
        self.pending[key] = location
        self.files[location] = data
        self.deps.written.add(key)

    def delete(self, key: str) -> None:
        self._check_open()
        self.pending[key] = None
        self.deps.written.add(key)

    def require_exists(self, key: str) -> None:
        """Conflict if another commit deletes `key` (a namespace we create objects in)."""
        self.deps.must_exist.add(key)

    def require_unchanged(self, key: str) -> None:
        """Conflict if another commit changes `key` (e.g. must stay absent)."""
        self.deps.unchanged_ranges.append((key, key + "\x00"))

    def require_unchanged_prefix(self, prefix: str) -> None:
        """Conflict if another commit changes any key with `prefix` (a dropped namespace)."""
        self.deps.unchanged_ranges.append(range_of_prefix(prefix))

    def set_lakehouse_def(self, ldef: LakehouseDef) -> None:
        self._check_open()
        self.new_lakehouse_def = ldef
        self.deps.written.add(LAKEHOUSE_DEF_KEY)

    @property
    def has_changes(self) -> bool:
        return bool(self.pending) or self.new_lakehouse_def is not None

    # -- commit ---------------------------------------------------------------------

    def abort(self) -> None:
        """Forget every change; nothing was written to storage."""
        self.closed = True
        self.pending.clear()
        self.files.clear()

    def commit(self) -> int:
        """Commit atomically; return the new version (the base one if nothing changed)."""
        self._check_open()
        if not self.has_changes:
            self.closed = True
            return self.base_version
        storage = self.engine.storage
        ldef_location = self.base.lakehouse_def_location
        if self.new_lakehouse_def is not None:
            ldef_location = new_lakehouse_def_location()
            self.files[ldef_location] = encode_definition(self.new_lakehouse_def)
        storage.write_immutable_many(self.files)
        base = self.base
        for attempt in range(MAX_ATTEMPTS):
            self.attempts += 1
            version = base.version + 1
            root_bytes, root = self._build_root(base, version, ldef_location)
            self.check_alive()
            if self._create_root(version, root_bytes):
                try:
                    self._check_not_below_oldest(version)
                except StorageError as exc:  # landed, but maybe below an expired range
                    self.closed = True
                    raise AmbiguousWriteError(
                        f"version {version} was created, but reading the oldest version "
                        f"marker to confirm it is readable failed: {exc}"
                    ) from exc
                self.engine.roots.write_hint(version)
                root.location = root_node_file(version)
                self.engine.roots.remember(version, root)
                self.committed_version = version
                self.closed = True
                return version
            # Back off before reading the latest version, not between reading and using
            # it: a version read before the sleep is taken by whoever committed during it.
            delay = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
            time.sleep(random.uniform(0, delay))
            base, ldef_location = self._rebase(base, ldef_location)
            self.replays += 1
        raise CommitRetriesExhaustedError(
            f"gave up after {MAX_ATTEMPTS} lost races for version {base.version + 1}"
        )

    # -- lifetime (what expiration relies on; see trinityfs/lifecycle/expire.py) --------

    def check_alive(self) -> None:
        """Refuse to commit after the lakehouse's txn_ttl_millis (0 = no limit).

        Expiration spares files and roots younger than that, so a transaction within
        it never points to anything expiration removed.
        """
        ttl = self.base.lakehouse_def.txn_ttl_millis
        if ttl and now_millis() - self.began_at_millis > ttl:
            raise TransactionExpiredError(
                f"transaction began {now_millis() - self.began_at_millis} ms ago, longer "
                f"than txn_ttl_millis={ttl}; nothing was committed"
            )

    def _check_not_below_oldest(self, version: int) -> None:
        """A root created below _oldest_version.txt filled a hole left by expiration.

        Expiration writes the marker before deleting roots, so a create that succeeded
        because root `version` had been deleted is followed by a marker above it. Such a
        root is invisible to every reader: remove it and fail instead of reporting a
        commit that nobody would see.
        """
        oldest = self.engine.roots.oldest_version()
        if version >= oldest:
            return
        self.engine.storage.delete(root_node_file(version))
        self.closed = True
        raise TransactionExpiredError(
            f"version {version - 1}, the base of this transaction, was expired (oldest "
            f"readable version is {oldest}); nothing was committed, retry the transaction"
        )

    def _build_root(self, base: Snapshot, version: int, ldef_location: str):
        ldef = base.lakehouse_def
        nodes = self.engine.nodes(ldef.order)
        writer = TreeWriter(nodes, ldef.order, self.engine.budget(ldef), version)
        root = writer.commit(base.root, self.pending)
        root.system = {
            "lakehouse_def": ldef_location,
            "previous_root": root_node_file(base.version),
            "created_at_millis": str(max(now_millis(), base.created_at_millis + 1)),
        }
        nodes.write_new_nodes(root)
        return encode_node(root.to_file(), ldef.order), root

    def _create_root(self, version: int, data: bytes) -> bool:
        """Create the root of `version`; True if ours landed, False if another did."""
        return self.engine.roots.create(version, data)

    def _rebase(self, base: Snapshot, ldef_location: str) -> tuple[Snapshot, str]:
        """After a lost race: validate against every newer version, then move onto it."""
        engine = self.engine
        latest = engine.roots.latest_version()
        serializable = self.isolation == IsolationLevel.SERIALIZABLE
        for version in range(base.version + 1, latest + 1):
            self.deps.validate(version, engine.changes(version), serializable)
        new_base = engine.snapshot(latest)
        if self.new_lakehouse_def is None:
            ldef_location = new_base.lakehouse_def_location
        if new_base.lakehouse_def.order != base.lakehouse_def.order:
            raise CommitConflictError(LAKEHOUSE_DEF_KEY, latest)
        return new_base, ldef_location
