"""Shared helpers of the lifecycle tests: builders, a crashing storage, process workers.

Worker functions live here (not in test modules) so that spawned processes can import
them by name.
"""

from __future__ import annotations

import os
import threading
import time

from trinityfs import Lakehouse
from trinityfs.catalog.writer import CatalogTransaction
from trinityfs.storage import Storage
from trinityfs.tree import check_tree
from trinityfs.txn.transaction import Transaction

# Small nodes: a few dozen tables give a tree of depth 2-3 with flushes and splits.
SMALL_TREE = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 600,
}
# Nodes that keep commits cheap to encode, for the 10,000-version history.
FAST_TREE = {
    "order": 8,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 8 * (16 + 16 + 204) + 2500,
}
NO_FSYNC = {"fsync": False}


def make_history(lake: Lakehouse, commits: int, tables: int = 40, namespace: str = "ns") -> None:
    """`commits` single-change commits: create `tables` tables, then replace them in turn."""
    if not lake.snapshot().namespace_exists(namespace):
        lake.create_namespace(namespace)
    existing = set(lake.list_tables(namespace))
    for i in range(commits):
        name = f"t{i % tables}"
        if name not in existing:
            lake.create_table(namespace, name, {"properties": {"gen": str(i)}})
            existing.add(name)
        else:
            lake.replace_table(namespace, name, {"properties": {"gen": str(i)}})


def fast_history(lake: Lakehouse, commits: int, tables: int = 300, namespace: str = "ns") -> None:
    """Like make_history, but each commit builds on the root the previous one wrote (no
    latest-version probing) and the hint is written once at the end: same files, fewer
    requests, so 10,000 versions take seconds rather than a minute."""
    engine = lake.engine
    if not lake.snapshot().namespace_exists(namespace):
        lake.create_namespace(namespace)
    existing = set(lake.list_tables(namespace))
    snap = engine.snapshot()
    write_hint = engine.roots.write_hint
    engine.roots.write_hint = lambda version: None
    try:
        for i in range(commits):
            name = f"t{i % tables}"
            txn = CatalogTransaction(Transaction(engine, snap))
            if name in existing:
                txn.replace_table(namespace, name, {"properties": {"gen": str(i)}})
            else:
                txn.create_table(namespace, name, {"properties": {"gen": str(i)}})
                existing.add(name)
            version = txn.commit()
            snap = engine.snapshot_of_root(version, engine.roots.load(version))
    finally:
        engine.roots.write_hint = write_hint
    write_hint(snap.version)


def read_fully(lake: Lakehouse, version: int | None = None, *, export: str | None = None) -> dict:
    """Every namespace, table and view of a version (or export), definitions read, and
    the tree checked. Returns {object: properties}."""
    view = lake.at(version, export=export) if export else lake.at(version)
    out = {}
    for ref, location in view.iter_all():
        msg = view.read_definition(ref, location)
        out[str(ref)] = dict(msg.properties)
    snap = view.snapshot
    check_tree(
        snap.nodes,
        snap.root,
        order=snap.lakehouse_def.order,
        budget=lake.engine.budget(snap.lakehouse_def),
        version=snap.version,
    )
    return out


def files_under(path: str) -> dict[str, int]:
    """Relative path -> size of every file below a local directory."""
    out = {}
    for directory, _dirs, names in os.walk(path):
        for name in names:
            full = os.path.join(directory, name)
            out[os.path.relpath(full, path).replace(os.sep, "/")] = os.path.getsize(full)
    return out


def files_of(storage: Storage) -> dict[str, int]:
    """Location -> size of every file of a storage root (any store)."""
    return {e.location: e.size for e in storage.list("")}


def copy_store(source: Storage, url: str) -> Storage:
    """Copy every file of `source` to a new root `url` (memory:// copies are cheap).

    Waits a few milliseconds at the end, so that an expiration with grace 0 started
    right after sees every copy as older than its cutoff."""
    target = Storage(url)
    for entry in source.list(""):
        target.write(entry.location, source.read(entry.location))
    time.sleep(0.005)
    return target


class SimulatedCrash(RuntimeError):
    """Raised by CrashingStorage where a real process would have died."""


class CrashingStorage(Storage):
    """A Storage that dies at its (budget+1)-th mutating request (write or delete)."""

    def __init__(self, url: str, budget: int):
        super().__init__(url, None if url.startswith("memory://") else NO_FSYNC)
        self.budget = budget
        self.mutations = 0
        self.log: list[tuple[str, str]] = []
        self._tick_lock = threading.Lock()

    def _tick(self, op: str, loc: str) -> None:
        with self._tick_lock:
            self.mutations += 1
            if self.mutations > self.budget:
                raise SimulatedCrash(f"simulated crash before {op} of {loc}")
            self.log.append((op, loc))

    def write(self, loc, data) -> None:
        self._tick("write", loc)
        super().write(loc, data)

    def delete(self, loc) -> None:
        self._tick("delete", loc)
        super().delete(loc)


# -- process workers ------------------------------------------------------------------


def commit_tables(url: str, prefix: str, seconds: float, out) -> None:
    """Create tables `<prefix><n>` one commit at a time for `seconds`; report each
    (table, version) that committed. A commit refused because it outlived the
    transaction TTL (heavy contention) is retried in a new transaction, as an
    application would; it is reported as ("expired", table)."""
    from trinityfs.errors import TransactionExpiredError

    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    deadline = time.monotonic() + seconds
    done = []
    n = 0
    while time.monotonic() < deadline:
        name = f"{prefix}{n}"
        try:
            version = lake.create_table("ns", name, {"properties": {"by": prefix}})
        except TransactionExpiredError:
            done.append(("expired", name))
            continue
        except Exception as exc:  # reported to the test, which fails on any
            done.append(("error", f"{type(exc).__name__}: {exc}"))
            n += 1
            continue
        done.append((name, version))
        n += 1
    out.put((prefix, done))


def dtxn_begin(url: str, out) -> None:
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    txn = lake.begin_distributed()
    txn.create_namespace("dist")
    txn.create_table("dist", "from_a", {"properties": {"pid": str(os.getpid())}})
    txn.save()
    out.put(txn.id)


def dtxn_add(url: str, txn_id: str, out) -> None:
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    txn = lake.load_distributed(txn_id)
    seen = txn.list_tables("dist")
    txn.create_table("dist", "from_b", {"properties": {"pid": str(os.getpid())}})
    txn.set_namespace_properties("dist", {"touched_by": "b"})
    txn.save()
    out.put(seen)


def dtxn_commit(url: str, txn_id: str, out) -> None:
    lake = Lakehouse.open(url, storage_options=NO_FSYNC)
    txn = lake.load_distributed(txn_id)
    seen = txn.list_tables("dist")
    out.put((seen, txn.commit()))
