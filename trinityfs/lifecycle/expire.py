"""Version expiration and garbage collection (FORMAT.md section 6).

Retention comes from the latest LakehouseDef's properties, overridable per call:
``version.max-age-millis`` (default 604800000, 7 days) and
``version.min-versions-to-keep`` (default 3). A version is kept when it is younger than
the max age or among the newest min-versions. The grace period (default the
LakehouseDef's ``txn_ttl_millis``, overridable per call) protects what running
transactions may still use; it never goes below the *grace floor*, the longest a
commit may take from writing its files to creating its root (the commit budget,
`trinityfs.txn.backoff.COMMIT_BUDGET_SECONDS`, or ``txn_ttl_millis`` when shorter),
whatever the caller asks. A safety margin of a quarter of it (at most one minute)
absorbs clock skew between writers, the store and this process.

The markers are advisory (`trinityfs/lifecycle/markers.py`): what is live is computed
from the roots themselves. The latest version is found by probing roots; the listed
roots give the oldest readable one; a marker that names no root (above the latest,
or a deleted root) is reported and rewritten, never obeyed.

Steps (each one idempotent; a crash anywhere leaves a lakehouse that reads correctly and
that the next run finishes cleaning):

1. List the root once, check the markers against the listed roots, and read the
   distributed transaction files.
2. Choose the oldest version to keep, K = the smallest of: the retention bound, the
   version before the first root created within the grace period, and the base
   version of every distributed transaction not expired for longer than the grace
   period; never below the oldest readable version (a true marker never moves back)
   and never above the latest ``min_versions`` versions, whatever the marker says.
3. Write ``_oldest_version.txt`` = K **first** (unless a concurrent expiration already
   moved it higher; a lying marker is rewritten): from then on no reader relies on an
   older root.
4. Delete the roots of versions below K.
5. Mark every file reachable from the roots K..latest (the latest is read again after
   marking and newer roots are marked too), from the exports recorded in the latest
   LakehouseDef, and from the live distributed transactions; the walk stops at nodes
   already marked (immutable nodes are shared between versions), so it reads each
   distinct node once.
6. Sweep: delete node, definition, lakehouse definition and transaction files, root
   copies of unrecorded exports, stale directories of unrecorded full exports, and
   leftover temporary and probe files, that nothing marked and that are older than
   the grace period. Files orphaned by crashed commits are among them. Unknown files
   are reported, never deleted. Transaction files go first, and every delete is
   issued within `SWEEP_DECISION_MILLIS` of a look at the latest version that found
   no unmarked root (versions found newer are marked first and spared: see (g)).

A dry run does steps 1, 2 and 5 and reports what steps 3, 4 and 6 would remove.

The cutoff is first this clock's. Moving it back only keeps more, so only when it
would delete something (roots in step 2, or else files in step 6) does expiration
measure how far this clock runs ahead of the store's (`stamps.clock_ahead` writes a
probe file) and move the cutoff back by that; a run that deletes nothing, like a dry
run, writes nothing, so it works with read-only credentials.

Why it is safe while writers commit
-----------------------------------
Let T0 be the time expiration starts and C = T0 - grace - margin its cutoff. A writer
W reads the latest version b at its begin (time t_b), builds its changes, writes new
node and definition files, then creates root b+1 with create-if-absent; when that root
exists it validates against versions b+1..latest and replays its changes onto the
latest root only (never onto its own, older base).

(a) W never points at a deleted file. The new root W creates references three sorts
of files: those W wrote itself, those of the tree of the root it built on (its base,
or the latest root it replayed onto), and definition files already referenced by that
tree. Files W wrote were written after t_b. Every transaction refuses to create a root
once it is older than txn_ttl_millis (`Transaction.check_alive`; a distributed one at
its expire_at_millis, which expiration honours explicitly), so with the default grace
those files are younger than the grace at T0 or were written after T0: never swept.
The root W built on was the latest root when W created its own on top of it, so it
was not below K (see (b)), and it is marked (step 5 marks every root from K to the
latest, read again after marking) or was created after marking started, in which case,
by induction on versions, everything it references is marked or new.

(b) W never resurrects a deleted root. Root b+1 did not exist at t_b, so it was created
after W began: within the grace period if W is alive, hence at or above the first root
created after C, hence kept (K is at most the version before that root, which also
keeps W's base b). With a grace period shorter than the transactions (a per-call
override), the transaction layer still catches it: expiration writes the marker before
deleting any root, so a create that succeeds only because root b+1 was deleted is
followed by a marker above b+1; the committer reads the marker after creating its root,
removes that invisible root and raises TransactionExpiredError
(`Transaction._check_not_below_oldest`). Nothing is reported committed that readers
would not see.

(c) Validation and replay read only roots b..latest, all kept by (b).

(d) Files younger than the grace period are never swept, which covers files written
after listing, files of commits still in flight, running roots of distributed
transactions saved meanwhile, and full exports still being copied (their directory is
spared while any of its files is young). A live lease (a bulk load's or a full or
partial export's, BULK_LEASE_PREFIX) also spares every file written since it began,
however long the load or the copy takes (`_sweep_cutoff`).

(e) A rollback (or a distributed transaction) builds on an older tree: it re-checks,
right before creating its root, that the version it builds on is not below the marker
and that its root still exists (`trinityfs.txn.publish`); expiration writes the marker
and deletes that root before it marks, so a rollback that passes the check is seen
by the marking of any expiration that could sweep its files, except one that deleted
the target in the instant between the check and the create: the rollback then finds
the target gone after its create, checks its new root file by file and, when files
are gone, commits the previous tree again on top and fails.

(f) Overlapping expirations: each chooses K from the roots, not from the marker; a
marker is only moved forward (re-read right before writing); roots that vanish while
marking (another run with a stricter policy deleted them) make marking restart above
them, and after the sweep a marker left below the kept range is moved up to it. Only
what an expiration leaves counts as one (a marker above the vanished roots, or no
older kept root left): a root lost from the middle of the history, older roots still
there, stops expiration before it sweeps, like any missing file (their versions are
kept and readable; marking only above the hole would sweep what they alone reach).

(g) A writer that pauses past the commit window (SIGSTOP, a suspended machine) lands
a root whose new files are older than the grace period and were unreferenced when
this run marked. Its committer checks them after its root landed and writes back any
that are gone (`Transaction._restore_if_swept`); this run helps in two ways. The sweep
looks at the latest version again right before deleting, and at least every
`SWEEP_DECISION_MILLIS` while it deletes (`gc.sweep_garbage`): a root found there is
marked and what it uses spared. A delete decided before the late root landed is
issued within that window of its decision, and the committer checks its files again
once the window (plus an allowance for requests in flight) has passed since its root
landed, so it sees every such delete. Left: a sweep or a delete request itself
stalled for longer than that allowance between its clock check and the store.

What expiration does not protect: readers of versions below K (time travel to an
expired version fails with VersionNotFoundError or, mid-read, StorageFileNotFoundError).

Idempotent and resumable: the marker only moves forward; roots below it are deleted by
whichever run sees them; marking depends only on kept roots, which no step deletes;
deleting a file that is already gone is not an error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from trinityfs.errors import CorruptFileError, StorageFileNotFoundError
from trinityfs.format.paths import OLDEST_VERSION, parse_root_node_file
from trinityfs.lifecycle.dtxn import lifetime_bound
from trinityfs.lifecycle.dtxn_files import is_claim
from trinityfs.lifecycle.expire_overlap import mark_kept, repair_marker_after, write_marker
from trinityfs.lifecycle.gc import (
    StoredTransaction,
    delete_all,
    find_unreachable,
    mark_transactions,
    scan_transactions,
    sweep_garbage,
)
from trinityfs.lifecycle.inventory import Inventory
from trinityfs.lifecycle.mark import DEFAULT_THREADS
from trinityfs.lifecycle.markers import assess
from trinityfs.lifecycle.retention import ExpireReport, RetentionPolicy, oldest_to_keep, stamps_of
from trinityfs.lifecycle.stamps import KEEP, clock_ahead, future_stamp, store_aged
from trinityfs.txn.engine import Engine, now_millis

log = logging.getLogger(__name__)

#: transaction files whose id starts with this are leases (a bulk load's,
#: trinityfs/catalog/bulk.py; an export's, trinityfs/lifecycle/lease.py): while one is
#: live, nothing written since it began is swept
BULK_LEASE_PREFIX = "bulk-"
#: how far before a lease's began_at_millis (its writer's clock) the files it protects
#: may be stamped by the store: object stores keep whole seconds (a file written 0.9 s
#: after the lease began can look 0.1 s older than it), and a writer's clock may run
#: ahead of the store's. Sparing that much more garbage for a while costs nothing.
LEASE_CLOCK_ALLOWANCE_MILLIS = 60_000


def expire(
    engine: Engine,
    max_age_millis: int | None = None,
    min_versions: int | None = None,
    dry_run: bool = False,
    *,
    grace_millis: int | None = None,
    threads: int = DEFAULT_THREADS,
    future_stamps: str = KEEP,
) -> ExpireReport:
    """Expire old versions and collect unreachable files (see the module docstring).
    `future_stamps`: "keep" (default) ages versions stamped in the future by their
    stamps, "store-time" by the store's time of their roots (`stamps.store_aged`)."""
    storage = engine.storage
    requests_before = storage.stats.snapshot()
    started = time.perf_counter()
    now = now_millis()
    roots = engine.roots
    latest = roots.latest_version()  # probed: the roots decide, markers only start it
    latest_ldef = engine.snapshot(latest).lakehouse_def
    policy = RetentionPolicy.of(
        latest_ldef, max_age_millis, min_versions, grace_millis, future_stamps
    )
    # By this clock first. Moving the cutoff back (`clock_ahead`) only keeps more, so
    # the store is probed only when this clock would delete something.
    cutoff = now - policy.grace_millis - policy.margin_millis

    phases: dict[str, float] = {}
    clock = [started]  # "list" includes finding the latest version

    def phase(name: str) -> None:
        now_ = time.perf_counter()
        phases[name] = now_ - clock[0]
        clock[0] = now_

    # 1. one listing, the markers against the roots, and the distributed transactions
    inventory = Inventory.scan(storage)
    markers = assess(storage, inventory, latest)
    if markers.oldest_damaged:
        # Refused as readers refuse it (a warm handle's latest did not read it): which
        # roots may be deleted is unknown. A link: the readers' SymlinkInRootError.
        roots.oldest_marker()
        why = next(msg for _sev, loc, msg in markers.problems if loc == OLDEST_VERSION)
        raise CorruptFileError(OLDEST_VERSION, f"{why}; expiration never guesses it")
    previous_oldest = markers.oldest
    transactions = scan_transactions(
        storage, inventory, threads, max_lifetime_millis=lifetime_bound(latest_ldef)
    )
    phase("list")

    # 2. the oldest version to keep: never above the latest min_versions
    created = stamps_of(engine)
    listed = inventory.roots()
    future = future_stamp(created, previous_oldest, latest, now)

    def ages(ahead: int) -> Callable[[int], int]:
        if future is None or policy.future_stamps == KEEP:
            return created
        first = future.version
        floor = created(first - 1) if first > previous_oldest else 0
        stored = {v: int(f.mtime * 1000) for v, f in listed.items() if f.mtime is not None}
        return store_aged(created, first, floor, latest, stored.get, ahead, now)

    def choose(cutoff: int, ahead: int = 0) -> tuple[int, str, list[StoredTransaction]]:
        live_txns = [t for t in transactions if t.live(cutoff)]
        bases = [t.base_version for t in live_txns]
        keep_from, kept_by = oldest_to_keep(
            ages(ahead), previous_oldest, latest, now, policy, cutoff, bases
        )
        protected = max(latest - policy.min_versions + 1, 0)
        if keep_from > protected:  # whatever the marker says
            keep_from, kept_by = protected, "min_versions"
        if keep_from < markers.floor and not any(keep_from <= v < markers.floor for v in listed):
            keep_from = markers.floor  # those roots are gone already: keep what exists
        return keep_from, kept_by, live_txns

    keep_from, kept_by, live_txns = choose(cutoff)
    old_roots = [(v, f) for v, f in sorted(listed.items()) if v < keep_from]
    probed = dry_run  # a dry run writes nothing: it trusts this clock
    if old_roots and not probed:
        probed, ahead = (
            True,
            clock_ahead(storage, f"expiration would delete {len(old_roots)} root(s)"),
        )
        if ahead:
            cutoff -= ahead
            keep_from, kept_by, live_txns = choose(cutoff, ahead)
            old_roots = [(v, f) for v, f in old_roots if v < keep_from]
    # Roots in keep_from..previous_oldest-1 (min_versions under a true marker) stay, but
    # readers refuse them: report what is readable, count what this run made unreadable.
    readable = max(keep_from, previous_oldest)
    why = kept_by if readable == keep_from else "marker"
    report = ExpireReport(dry_run, latest, previous_oldest, readable, why, policy, cutoff)
    report.marker_problems = [f"{loc}: {msg}" for _sev, loc, msg in markers.problems]
    report.future_stamp = future
    if future is not None and policy.future_stamps == KEEP:
        log.warning(future.message(policy.max_age_millis))
    elif future is not None:
        log.warning(future.store_time_message())
    phase("choose")

    # 3. the marker first (repaired when it lies), 4. then the roots below it
    if not dry_run:
        write_marker(engine, markers, keep_from)
        delete_all(storage, [f.location for _, f in old_roots], threads)
        for version, _ in old_roots:
            roots.forget(version)  # this process must not serve them from its cache
    report.removed.extend(f for _, f in old_roots)
    phase("delete_roots")

    # 5. mark
    live = mark_kept(engine, keep_from, transactions, cutoff, threads)
    if live.first_version > report.oldest_version:  # roots deleted by another run
        report.oldest_version, report.kept_by = live.first_version, "concurrent expiration"
    report.latest_version = live.last_version
    report.missing = sorted({loc for loc, _ in live.marker.missing})
    report.marked = {
        "versions": live.last_version - live.first_version + 1,
        "nodes": len(live.marker.nodes),
        "definitions": len(live.marker.definitions),
        "lakehouse_defs": len(live.marker.lakehouse_defs),
        "node_reads": live.marker.node_reads,
    }
    phase("mark")
    if report.missing and not dry_run:
        first_missing = report.missing[0]
        lost = parse_root_node_file(first_missing)
        referrer = live.marker.referrer(first_missing) or (
            f"version {lost + 1} as its previous root" if lost is not None else "?"
        )
        raise StorageFileNotFoundError(
            first_missing,
            f"expiration stopped before sweeping: {len(report.missing)} referenced file(s) "
            f"are missing (first {first_missing}"
            + (f", the root of version {lost}" if lost is not None else "")
            + f", referenced by {referrer}); run fsck",
        )

    # 6. sweep
    sweep = find_unreachable(inventory, live, _sweep_cutoff(cutoff, live_txns, policy))
    if sweep.garbage and not probed:  # no root was deleted: the kept range stands
        ahead = clock_ahead(storage, f"expiration would delete {len(sweep.garbage)} file(s)")
        if ahead:
            cutoff = report.cutoff_millis = cutoff - ahead
            live_txns = [t for t in transactions if t.live(cutoff)]
            mark_transactions(live, live_txns)  # expired ones the earlier cutoff left out
            sweep = find_unreachable(inventory, live, _sweep_cutoff(cutoff, live_txns, policy))
    report.live_transactions = sorted(
        t.tdef.id for t in live_txns if t.tdef is not None and not is_claim(t.tdef.id)
    )
    removed = sweep.garbage
    if not dry_run:  # sparing what roots landed since marking use (a late writer's)
        removed = sweep_garbage(engine, live, sweep.garbage, threads)
        repair_marker_after(engine, live.first_version)
    report.removed.extend(removed)
    report.spared_young = sweep.young
    report.unknown_files = sweep.unknown
    phase("sweep")
    report.phase_seconds = phases
    after = storage.stats.snapshot()
    report.requests = {k: after[k] - requests_before[k] for k in after}
    report.elapsed_seconds = time.perf_counter() - started
    return report


def _sweep_cutoff(cutoff: int, live_txns: list, policy: RetentionPolicy) -> int:
    """The sweep's cutoff, moved back to the start of every live lease (less
    LEASE_CLOCK_ALLOWANCE_MILLIS): a bulk load writes its definition files long before
    its root refers to them, an export its copies before its record."""
    began = [
        t.tdef.began_at_millis - policy.margin_millis - LEASE_CLOCK_ALLOWANCE_MILLIS
        for t in live_txns
        if t.tdef is not None and t.tdef.id.startswith(BULK_LEASE_PREFIX)
    ]
    return min([cutoff, *began])


__all__ = ["BULK_LEASE_PREFIX", "ExpireReport", "RetentionPolicy", "expire"]
