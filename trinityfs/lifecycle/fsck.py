"""fsck of a whole lakehouse: versions, exports, transactions and orphans.

Checks, collecting every problem instead of stopping at the first:

- the markers: ``_oldest_version.txt`` and ``_latest_hint.txt`` readable, the hint not
  beyond the latest version;
- every kept version (oldest marker .. latest): its root exists (no gap), decodes, its
  LakehouseDef is readable and valid, its ``previous_root`` exists (except for the
  oldest kept version, whose predecessor was expired), and its tree passes
  `trinityfs.tree.check_tree` (order, balance, key ranges, buffers);
- every pointer resolves inside the root: child nodes, definition files (each read and
  decoded as the type its key says), lakehouse definitions (locations that would leave
  the root are already refused when a node file is decoded);
- every file read is verified (content hash in its name, rows checksum in node files;
  docs/FORMAT-CHOICES.md "Integrity"), and each missing or corrupt file is reported with
  every kept version that reaches it (`versions`, and `affected_versions` per version);
  files too old to carry a hash or checksum are counted in `unverified_files`;
- every export recorded in the latest LakehouseDef, read like a version (against its
  own directory for a full export), with the same checks;
- every distributed transaction file: readable, its base version still kept while it
  is not expired, its running root readable;
- orphans: format files that no kept version, export or unexpired transaction reaches,
  with their sizes (expiration removes them once older than the grace period), and
  unknown files (never touched by trinityfs).

A file the listing did not show is looked at again before it is called missing (a
commit that landed after the listing wrote it; an export created again under its name);
an export root still gone while versions were committed since its record was read is a
warning (kind "changed"), not an error.

`ok` is False when any error was found; orphans and warnings do not make a lakehouse
unhealthy. `FsckReport.to_dict()` is the machine-readable form; `exit_status` is 0
(healthy) or 1 (errors) for scripts.

This module runs the checks; trinityfs/lifecycle/fsck_checks.py holds the checks of
definitions, trees and exports, trinityfs/lifecycle/fsck_report.py the report, the
second-pass confirmation and the attribution of bad files to versions.
"""

from __future__ import annotations

import time

from trinityfs.errors import CorruptFileError, LakehouseNotFoundError, SymlinkInRootError
from trinityfs.format.integrity import ROWS_DIGEST_KEY, has_content_name
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_PREVIOUS_ROOT,
    KeyCodec,
)
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import parse_root_node_file, root_node_file
from trinityfs.format.trinitylake_pb2 import LakehouseDef, TransactionDef
from trinityfs.lifecycle.dtxn import lifetime_bound
from trinityfs.lifecycle.dtxn_close import CLAIM_SKEW_MARGIN_MILLIS
from trinityfs.lifecycle.dtxn_files import is_claim
from trinityfs.lifecycle.fsck_checks import (
    MISSING,
    add_keys_of,
    check_definitions,
    check_export,
    check_tree_of,
    lakehouse_def,
    look_again,
)
from trinityfs.lifecycle.fsck_report import (
    FsckProblem,
    FsckReport,
    attribute_to_versions,
    confirmed,
    pointers,
)
from trinityfs.lifecycle.gc import LiveSet, find_unreachable, scan_transactions
from trinityfs.lifecycle.inventory import Inventory
from trinityfs.lifecycle.mark import DEFAULT_THREADS, Marker
from trinityfs.lifecycle.markers import assess, latest_by_listing, oldest_marker_damaged
from trinityfs.lifecycle.stamps import future_stamp
from trinityfs.tree import NodeStore
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.engine import Engine, now_millis


def fsck(engine: Engine, *, threads: int = DEFAULT_THREADS) -> FsckReport:
    """Check the whole lakehouse; never raises for what it finds (see the report).

    A check that finds errors runs once more and reports as errors only those found
    both times: the lakehouse may change while it is checked (an expiration deleting
    the versions it passes, an export dropped, a commit landing), and what is seen in
    one pass only is a warning (kind "changed"), never an error. A healthy lakehouse is
    checked once.
    """
    storage = engine.storage
    before = storage.stats.snapshot()
    started = time.perf_counter()
    report = _one_pass(engine, threads)
    if report.errors:
        report = confirmed(report, _one_pass(engine, threads))
    after = storage.stats.snapshot()
    report.requests = {k: after[k] - before[k] for k in after}
    report.elapsed_seconds = time.perf_counter() - started
    return report


def _one_pass(engine: Engine, threads: int) -> FsckReport:
    report = FsckReport(engine.storage.url)
    _fsck(engine, report, threads)
    return report


def _fsck(engine: Engine, report: FsckReport, threads: int) -> None:
    storage = engine.storage
    now = now_millis()
    inventory = Inventory.scan(storage)
    try:
        latest = engine.roots.latest_version()
        oldest = engine.roots.oldest_version()  # checked against the roots
    except LakehouseNotFoundError as exc:
        report.error("missing", "", str(exc))
        return
    except (CorruptFileError, SymlinkInRootError):
        if not oldest_marker_damaged(storage):
            raise
        # readers refuse a malformed oldest marker (assess reports it, with the repair);
        # everything else is still checked, from the roots listed
        latest = latest_by_listing(storage, inventory)
        oldest = None
    markers = assess(storage, inventory, latest)
    for severity, location, message in markers.problems:
        (report.error if severity == "error" else report.warn)("marker", location, message)
    if oldest is None or markers.outrun:  # readers trust an outrun marker: fsck does not
        oldest = markers.oldest
    report.oldest_version, report.latest_version = oldest, latest
    roots = inventory.roots()
    odd = look_again(storage, root_node_file(latest + 1))  # listings skip links and dirs
    if odd not in (None, MISSING):
        report.error(
            "corrupt",
            root_node_file(latest + 1),
            f"the root name of version {latest + 1} {odd}: readers skip it and serve "
            f"version {latest} as the latest, and every commit fails on it (remove it)",
        )
    for version in sorted(v for v in roots if v > latest):
        report.warn(
            "gap",
            roots[version].location,
            f"root of version {version} lies beyond a missing version {latest + 1}",
        )

    # Reachability and pointers, for every kept version at once.
    keys_of: dict[str, set[str]] = {}
    refs: dict[str, list[str]] = {}  # node file -> every file it points to
    unverified: set[str] = set()

    def remember_keys(loc: str, data: bytes, nf: NodeFile) -> None:
        add_keys_of(keys_of, nf)
        refs[loc] = pointers(nf)
        if not has_content_name(loc) and ROWS_DIGEST_KEY not in data:
            unverified.add(loc)

    marker = Marker(storage, threads=threads, strict=False, on_node=remember_keys, uncached=True)
    kept = [root_node_file(v) for v in range(oldest, latest + 1)]
    loaded = marker.mark_roots(kept)
    live = LiveSet(marker, oldest, latest)

    # Each kept version: root, previous root, lakehouse definition, tree invariants.
    ldefs: dict[str, LakehouseDef | None] = {}
    stores: dict[int, NodeStore] = {}
    for version in range(oldest, latest + 1):
        location = root_node_file(version)
        nf = loaded.get(location)
        if nf is None:
            continue  # reported by the marker as missing or corrupt
        report.versions_checked += 1
        previous = nf.system.get(KEY_PREVIOUS_ROOT)
        if version > oldest and previous is not None and previous not in inventory:
            report.error(
                "missing", previous, f"previous_root of version {version} is missing", version
            )
        ldef = lakehouse_def(storage, nf, ldefs, report, version)
        if ldef is None:
            continue
        store = stores.setdefault(ldef.order, NodeStore(storage, ldef.order))
        check_tree_of(store, nf, location, ldef, version, report)

    # A version stamped in the future holds back expiration by age (stamps never go down).
    def created(version: int) -> int:
        nf = loaded.get(root_node_file(version))
        return int(nf.system.get(KEY_CREATED_AT_MILLIS, "0")) if nf is not None else 0

    ahead = future_stamp(created, oldest, latest, now)
    if ahead is not None:
        report.warn("clock", root_node_file(ahead.version), ahead.message(), ahead.version)

    # Exports recorded in the latest definition.
    latest_nf = loaded.get(root_node_file(latest))
    latest_ldef = ldefs.get(latest_nf.system.get(KEY_LAKEHOUSE_DEF, "")) if latest_nf else None
    records = latest_ldef.exported_snapshots if latest_ldef is not None else {}
    for name, location in sorted(records.items()):
        check_export(engine, name, location, inventory, live, report, threads, latest)

    # Distributed transactions.
    bound = lifetime_bound(latest_ldef)
    for txn in scan_transactions(
        storage, inventory, threads, strict=False, max_lifetime_millis=bound
    ):
        entry = {"location": txn.file.location, "id": None, "state": "unreadable"}
        report.transactions.append(entry)
        if txn.tdef is None:
            report.error("transaction", txn.file.location, txn.problem or "unreadable")
            continue
        entry["id"] = txn.tdef.id
        entry["expire_at_millis"] = txn.tdef.expire_at_millis
        if is_claim(txn.tdef.id):  # a closing claim, no transaction: born expired
            entry["state"] = "claim"
            _check_claim_age(txn.tdef, txn.file.location, latest_ldef, now, report)
            continue
        if txn.tdef.expire_at_millis <= now:
            entry["state"] = "expired"
            report.warn(
                "transaction",
                txn.file.location,
                f"distributed transaction {txn.tdef.id} expired (expiration removes it)",
            )
            continue
        entry["state"] = "live"
        live.transaction_files.add(txn.file.location)
        base = txn.base_version
        if base is None or base < oldest or base > latest:
            report.error(
                "transaction",
                txn.file.location,
                f"distributed transaction {txn.tdef.id} begins at "
                f"{txn.tdef.beginning_root_node_file_path!r}, not a kept version",
            )
        running = txn.tdef.running_root_node_file_path
        if running and parse_root_node_file(running) is None:
            marker.mark_nodes([running], referrer=txn.file.location)

    # Pointers of the main lakehouse: nodes (walk) and definitions (read and decode).
    for location, referrer in marker.missing:
        version = parse_root_node_file(location)
        if version is not None:
            report.error(
                "missing",
                location,
                f"root of version {version} is missing: a gap "
                f"between the oldest ({oldest}) and latest ({latest}) version",
                version,
            )
        else:
            report.error("missing", location, f"referenced by {referrer or '?'} but missing")
    for location, referrer, message in marker.problems:
        version = parse_root_node_file(location)
        if version is not None:
            report.error("corrupt", location, f"root of version {version}: {message}", version)
        else:
            report.error("corrupt", location, f"{message} (referenced by {referrer or '?'})")
    for location in sorted(marker.lakehouse_defs - set(ldefs)):
        if location not in inventory:
            report.error(
                "missing",
                location,
                f"lakehouse definition referenced by {marker.referrer(location)} is missing",
            )
    report.nodes_checked = len(marker.nodes) + len(loaded)
    codec = KeyCodec.from_lakehouse_def(latest_ldef) if latest_ldef is not None else None
    check_definitions(storage, "", marker, keys_of, inventory, report, threads, codec)
    unverified.update(
        loc for loc in marker.definitions | marker.lakehouse_defs if not has_content_name(loc)
    )
    report.unverified_files = len(unverified)
    attribute_to_versions(report, refs, oldest, latest)

    # Orphans: every cutoff in the past, so nothing counts as too young to be one.
    sweep = find_unreachable(inventory, live, now, include_roots=True)
    report.orphans = sweep.garbage + sweep.young
    report.unknown_files = sweep.unknown


__all__ = ["FsckProblem", "FsckReport", "fsck"]


def _check_claim_age(
    claim: TransactionDef, location: str, ldef: LakehouseDef | None, now: int, report: FsckReport
) -> None:
    """A closing claim older than any commit may take: the process closing that
    transaction stopped, and the transaction stays blocked until the claim goes."""
    window = commit_window_millis(ldef) if ldef is not None else 0
    age = now - claim.began_at_millis
    if ldef is None or age <= window + CLAIM_SKEW_MARGIN_MILLIS:
        return
    report.warn(
        "transaction",
        location,
        f"closing claim {claim.id} was made {age // 1000} s ago, longer than a commit may "
        f"take ({window // 1000} s): the process closing that transaction probably "
        "stopped. Once no process can still be closing it, remove this file (expiration "
        "removes it after its grace period)",
    )
