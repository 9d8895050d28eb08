"""Mark and sweep of the files no kept version, export or live transaction uses.

Used by expiration (trinityfs/lifecycle/expire.py, which holds the safety argument) and
by fsck (which lists the same orphans without deleting them).

Live (marked):
- every file reachable from the root of each kept version (nodes, namespace/table/view
  definitions, the lakehouse definition);
- every file reachable from the root of each export recorded in the latest
  LakehouseDef (minimal and partial exports: their root copy and everything below it);
  a full export's directory ``_exports/<name>/`` is a lakehouse of its own and is
  never looked into;
- every distributed transaction not expired for longer than the grace period: its
  TransactionDef, its running root and everything below it (its base version is kept
  by expiration).

Collectable, when not live and older than the grace period: root node files below the
kept range, node files, definitions, lakehouse definitions, transaction files, the root
copies of unrecorded minimal/partial exports, the directories of unrecorded full exports
(only when every file in it is old: a full export being written is unrecorded until it
completes), temporary files of interrupted local writes and probe files. Anything else
(Iceberg data, files of other tools, names we do not recognize) is reported, never
deleted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from trinityfs.errors import CorruptFileError, StorageFileNotFoundError, TrinityError
from trinityfs.format.definitions import decode_lakehouse_def
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import parse_root_node_file, root_node_file
from trinityfs.format.trinitylake_pb2 import TransactionDef
from trinityfs.lifecycle.dtxn_files import MAX_TXN_LIFETIME_MILLIS, decode_transaction_def
from trinityfs.lifecycle.inventory import (
    COLLECTABLE,
    DEFINITION,
    EXPORT_FILE,
    EXPORT_ROOT,
    LAKEHOUSE_DEF,
    MARKER,
    NODE,
    PROBE,
    ROOT,
    TEMPORARY,
    TRANSACTION,
    UNKNOWN,
    Inventory,
    StoredFile,
    classify,
)
from trinityfs.lifecycle.mark import DEFAULT_THREADS, Marker
from trinityfs.storage import Storage
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import SWEEP_DECISION_MILLIS


@dataclass
class StoredTransaction:
    """A distributed transaction file found in the inventory."""

    file: StoredFile
    tdef: TransactionDef | None  # None when unreadable
    problem: str | None = None

    @property
    def base_version(self) -> int | None:
        if self.tdef is None:
            return None
        return parse_root_node_file(self.tdef.beginning_root_node_file_path)

    def live(self, cutoff_millis: int) -> bool:
        """Still usable, or expired for less than the grace period (cutoff = now - grace)."""
        return self.tdef is None or self.tdef.expire_at_millis > cutoff_millis


def scan_transactions(
    storage: Storage,
    inventory: Inventory,
    threads: int = DEFAULT_THREADS,
    *,
    strict: bool = True,
    max_lifetime_millis: int = MAX_TXN_LIFETIME_MILLIS,
) -> list[StoredTransaction]:
    """Read every transaction file of the inventory (in parallel).

    A file that is gone (committed or aborted since the listing) or damaged
    (CorruptFileError: it can never be loaded) is returned unreadable, with its problem.
    Any other failure to read one (a timeout, a refused request) is raised when `strict`
    (expiration): the transaction may be alive, and without its file expiration would
    neither keep its base version nor mark its running root, so a saved transaction
    would be lost to a transient error. fsck (not strict) reports it instead.
    """
    files = inventory.of_kind(TRANSACTION)

    def read(f: StoredFile) -> StoredTransaction:
        try:
            data = storage.read(f.location)
            tdef = decode_transaction_def(data, f.location, max_lifetime_millis)
            return StoredTransaction(f, tdef)
        except (StorageFileNotFoundError, CorruptFileError) as exc:
            return StoredTransaction(f, None, str(exc))
        except TrinityError as exc:
            if strict:
                raise
            return StoredTransaction(f, None, str(exc))

    if not files:
        return []
    with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
        return list(pool.map(read, files))


@dataclass
class LiveSet:
    """What marking found: the marker's sets plus exports and the versions marked."""

    marker: Marker
    first_version: int
    last_version: int
    export_roots: set[str] = field(default_factory=set)  # recorded minimal/partial roots
    export_dirs: set[str] = field(default_factory=set)  # recorded full export directories
    transaction_files: set[str] = field(default_factory=set)
    missing_export_roots: list[str] = field(default_factory=list)
    recorded_exports: set[str] = field(default_factory=set)  # by the latest marked version

    def is_live(self, f: StoredFile) -> bool:
        kind, loc = f.kind, f.location
        if kind == ROOT:
            version = parse_root_node_file(loc)
            return version is not None and version >= self.first_version
        if kind == NODE:
            return loc in self.marker.nodes
        if kind == DEFINITION:
            return loc in self.marker.definitions
        if kind == LAKEHOUSE_DEF:
            return loc in self.marker.lakehouse_defs
        if kind == TRANSACTION:
            return loc in self.transaction_files
        if kind == EXPORT_ROOT:
            return loc in self.export_roots
        # temporary and probe files are never live; markers and unknown files always
        return kind not in (TEMPORARY, PROBE)


def mark_live(
    engine: Engine,
    first_version: int,
    transactions: Iterable[StoredTransaction],
    cutoff_millis: int,
    *,
    threads: int = DEFAULT_THREADS,
    strict: bool = True,
) -> LiveSet:
    """Mark from versions first_version..latest, recorded exports and live transactions.

    The latest version is read again after marking, and versions committed meanwhile
    are marked too (incrementally: their unchanged subtrees are already marked).
    """
    storage = engine.storage
    marker = Marker(storage, threads=threads, strict=strict)
    last = engine.roots.latest_version()
    roots = marker.mark_roots([root_node_file(v) for v in range(first_version, last + 1)])
    live = LiveSet(marker, first_version, last)
    mark_transactions(live, [t for t in transactions if t.live(cutoff_millis)])
    _mark_exports(engine, live, roots.get(root_node_file(last)))
    mark_newer(engine, live)  # versions committed while marking
    return live


def mark_transactions(live: LiveSet, transactions: Iterable[StoredTransaction]) -> None:
    """Keep the files of `transactions` (the live ones) and the running roots they name."""
    for txn in transactions:
        if txn.file.location in live.transaction_files:
            continue
        live.transaction_files.add(txn.file.location)
        if txn.tdef is None:
            continue
        running = txn.tdef.running_root_node_file_path
        if running and parse_root_node_file(running) is None:
            live.marker.mark_nodes([running], referrer=txn.file.location)


def mark_newer(engine: Engine, live: LiveSet) -> bool:
    """Mark the versions committed since `live` was marked (incrementally: their
    unchanged subtrees are marked already), until a look at the latest version finds
    none; whether there were any."""
    found = False
    while True:
        newest = engine.roots.latest_version()
        if newest <= live.last_version:
            break
        roots = live.marker.mark_roots(
            [root_node_file(v) for v in range(live.last_version + 1, newest + 1)]
        )
        live.last_version = newest
        _mark_exports(engine, live, roots.get(root_node_file(newest)))
        found = True
    _forget_dropped_exports(live)
    return found


def _forget_dropped_exports(live: LiveSet) -> None:
    """An export root found missing while marking, whose record the latest version no
    longer has, was dropped meanwhile (drop_export commits the record's removal before
    it deletes the files, and the latest version was read again after marking): not a
    missing file, which would stop expiration and send the user to fsck for nothing."""
    dropped = {loc for loc in live.missing_export_roots if loc not in live.recorded_exports}
    if not dropped:
        return
    live.missing_export_roots = [loc for loc in live.missing_export_roots if loc not in dropped]
    live.marker.missing = [(loc, by) for loc, by in live.marker.missing if loc not in dropped]


def _mark_exports(engine: Engine, live: LiveSet, root: NodeFile | None) -> None:
    """Mark the exports recorded in the LakehouseDef of `root` (the latest version)."""
    storage = engine.storage
    if root is None:
        return
    location = root.system.get(KEY_LAKEHOUSE_DEF)
    if location is None:
        return
    ldef = decode_lakehouse_def(storage.read_immutable(location), location)
    live.recorded_exports = set(ldef.exported_snapshots.values())
    for name in sorted(ldef.exported_snapshots):
        export_root = ldef.exported_snapshots[name]
        directory, _, _ = export_root.rpartition("/")
        if directory:
            live.export_dirs.add(directory)
            continue
        if export_root in live.export_roots and export_root not in live.missing_export_roots:
            continue
        # read again when it was missing: dropped and created again while marking
        live.export_roots.add(export_root)
        if export_root in live.missing_export_roots:
            live.missing_export_roots.remove(export_root)
        if live.marker.mark_reread(export_root, referrer=f"export {name}") is None:
            live.missing_export_roots.append(export_root)


@dataclass
class Sweep:
    """Unreachable files split by what expiration does with them."""

    garbage: list[StoredFile] = field(default_factory=list)  # old enough: delete
    young: list[StoredFile] = field(default_factory=list)  # within the grace period: spare
    unknown: list[StoredFile] = field(default_factory=list)  # not ours: never delete


def find_unreachable(
    inventory: Inventory, live: LiveSet, cutoff_millis: int, *, include_roots: bool = False
) -> Sweep:
    """Classify every file of the inventory that `live` does not keep.

    Roots below the kept range are left out unless `include_roots` (expiration deletes
    them in a step of their own, before marking).
    """
    sweep = Sweep()

    def old(f: StoredFile) -> bool:
        return f.mtime is not None and f.mtime * 1000 <= cutoff_millis

    for f in inventory.entries.values():
        if f.kind == UNKNOWN:
            sweep.unknown.append(f)
            continue
        if f.kind in (EXPORT_FILE, MARKER) or (f.kind == ROOT and not include_roots):
            continue
        if live.is_live(f):
            continue
        if f.kind == ROOT or old(f):
            sweep.garbage.append(f)
        else:
            sweep.young.append(f)
    for directory, files in sorted(inventory.export_dirs().items()):
        if directory in live.export_dirs:
            continue
        ours, strangers = [], []
        for f in files:
            kind = classify(f.location[len(directory) + 1 :])
            (ours if kind in COLLECTABLE or kind == MARKER else strangers).append(
                StoredFile(f.location, EXPORT_FILE, f.size, f.mtime)
            )
        sweep.unknown.extend(strangers)
        # A full export being written has no record yet: spare it while any file is new.
        if all(old(f) for f in files):
            sweep.garbage.extend(ours)
        else:
            sweep.young.extend(ours)
    for key in ("garbage", "young", "unknown"):
        getattr(sweep, key).sort(key=lambda f: f.location)
    return sweep


def sweep_garbage(
    engine: Engine, live: LiveSet, garbage: list[StoredFile], threads: int = DEFAULT_THREADS
) -> list[StoredFile]:
    """Delete `garbage`, sparing what versions committed meanwhile use; -> what was
    deleted. Transaction files go first (a bulk load checks its lease to tell whether
    its files may be swept: none is deleted while its lease file still exists).

    A root may land late (its writer paused past the commit window) after `live` was
    marked, over files this sweep chose. Every delete is therefore issued within
    SWEEP_DECISION_MILLIS (both clocks) of a look at the latest version that found no
    root unmarked; versions found newer are marked first and what they use is spared.
    A late committer checks its files again once that long has passed since its root
    landed (trinityfs/txn/transaction.py), so any delete decided before it landed is
    seen by that check, and any decided after spares its files."""
    deleted: list[StoredFile] = []
    first = [f for f in garbage if f.kind == TRANSACTION]
    for part in (first, [f for f in garbage if f.kind != TRANSACTION]):
        remaining = part
        while remaining:
            looked_mono, looked_wall = time.monotonic(), now_millis()
            while mark_newer(engine, live):  # a root landed since: spare what it uses
                remaining = [f for f in remaining if not live.is_live(f)]
                looked_mono, looked_wall = time.monotonic(), now_millis()
            window = SWEEP_DECISION_MILLIS
            deadline_mono, deadline_wall = looked_mono + window / 1000, looked_wall + window
            done, remaining = _delete_until(
                engine.storage, remaining, deadline_mono, deadline_wall, threads
            )
            deleted.extend(done)
    return deleted


def _delete_until(
    storage: Storage,
    files: list[StoredFile],
    deadline_mono: float,
    deadline_wall: int,
    threads: int,
) -> tuple[list[StoredFile], list[StoredFile]]:
    """Delete files while neither clock passed its deadline; -> (deleted, left). The
    first failure is raised once every task finished."""

    def delete(f: StoredFile) -> bool:
        if time.monotonic() > deadline_mono or now_millis() > deadline_wall:
            return False
        storage.delete(f.location)
        return True

    if threads <= 1 or len(files) <= 1:
        outcomes = [delete(f) for f in files]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
            outcomes = list(pool.map(delete, files))
    done = [f for f, ok in zip(files, outcomes, strict=True) if ok]
    return done, [f for f, ok in zip(files, outcomes, strict=True) if not ok]


def delete_all(storage: Storage, locations: list[str], threads: int = DEFAULT_THREADS) -> None:
    """Delete files in parallel; the first failure is raised once all tasks finished."""
    if not locations:
        return
    if threads <= 1 or len(locations) == 1:
        for loc in locations:
            storage.delete(loc)
        return
    with ThreadPoolExecutor(max_workers=min(threads, len(locations))) as pool:
        for _ in pool.map(storage.delete, locations):
            pass


__all__ = [
    "LiveSet",
    "StoredTransaction",
    "Sweep",
    "delete_all",
    "find_unreachable",
    "mark_live",
    "mark_newer",
    "mark_transactions",
    "scan_transactions",
    "sweep_garbage",
]
