"""Expirations that overlap (trinityfs/lifecycle/expire.py, safety argument (f)): the
marker only moves forward, roots deleted by another run while this one marks, and the
marker repaired after a run."""

from __future__ import annotations

import logging
import time

from trinityfs.format.paths import OLDEST_VERSION, parse_root_node_file
from trinityfs.lifecycle.gc import LiveSet, mark_live
from trinityfs.lifecycle.markers import MarkerState
from trinityfs.txn.engine import Engine

log = logging.getLogger(__name__)

#: times the marker is written and checked again when roots vanish under the repair
REPAIR_ATTEMPTS = 10


def write_marker(engine: Engine, markers: MarkerState, keep_from: int) -> None:
    """Move `_oldest_version.txt` to `keep_from`: forward only, unless it lies (then it
    is rewritten to the truth). Re-read right before writing, so that a concurrent
    expiration's higher marker is not moved back."""
    raw = markers.oldest_marker
    if markers.oldest_is_lie:
        log.warning(
            "%s said %s, which names no root (latest is %d): rewritten to %d",
            OLDEST_VERSION,
            raw,
            markers.latest,
            keep_from,
        )
    elif (raw or 0) >= keep_from:  # no marker: readers read from version 0
        return
    current = engine.roots.oldest_marker()
    moved = current != raw and current is not None and keep_from <= current <= markers.latest
    if moved and engine.roots.marker_is_real(current):
        return  # another expiration moved it further meanwhile
    engine.storage.write(OLDEST_VERSION, str(keep_from).encode())


def mark_kept(
    engine: Engine,
    keep_from: int,
    transactions: list,
    cutoff: int,
    threads: int,
) -> LiveSet:
    """Mark from `keep_from`, tolerating roots deleted meanwhile.

    Another expiration running at the same time with a stricter policy deletes roots
    of our kept range (and sweeps what only they reach); without a compare-and-swap
    its marker may even be overwritten by ours. Roots gone while we mark are expired
    for good: mark again from the version after the newest missing root (every root
    from there to the latest exists), so that nothing reachable from an existing root
    above them is swept; the marker is repaired after the sweep. The caller reports a
    `first_version` above its choice as kept by a concurrent expiration.
    """
    live = mark_live(engine, keep_from, transactions, cutoff, threads=threads)
    for _ in range(5):
        gone = [v for loc, _ in live.marker.missing if (v := parse_root_node_file(loc)) is not None]
        if not gone or max(gone) >= live.last_version:
            break
        if not _deleted_by_an_expiration(engine, live.first_version, max(gone)):
            break  # a hole in the history, not an expiration: the caller stops (run fsck)
        first = max(gone) + 1
        log.warning(
            "roots of versions %s disappeared while marking (a concurrent expiration?): "
            "keeping versions from %d",
            sorted(gone),
            first,
        )
        live = mark_live(engine, first, transactions, cutoff, threads=threads)
    return live


#: seconds to wait, one after another, for another expiration to finish deleting the
#: roots below its marker before a root missing in the kept range is called a hole
GONE_ROOT_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def _deleted_by_an_expiration(engine: Engine, first: int, top: int) -> bool:
    """Whether roots missing in first..top (found while marking) were deleted by another
    expiration, rather than lost from the middle of the history.

    An expiration writes its marker first and then deletes every root below it, so what
    it leaves is a marker above `top` naming an existing root, or (when our lower marker
    overwrote its own) no root at all from `first` to `top`. A root lost any other way
    (a storage fault, a stray delete) leaves older roots in place: their versions are
    kept and readable, and marking only from above the hole would sweep the files they
    alone reach. Roots still there are looked at again a few times (the other run may be
    deleting them in parallel right now)."""
    roots = engine.roots
    for wait in (*GONE_ROOT_WAITS, None):
        marker = roots.oldest_marker()
        if marker is not None and marker > top and roots.exists(marker):
            return True
        left = sorted(
            v
            for entry in engine.storage.list("")
            if "/" not in entry.location
            and (v := parse_root_node_file(entry.location)) is not None
            and first <= v < top
        )
        if not left:
            return True
        if wait is None:
            log.error(
                "the root of version %d is missing while roots of older kept versions "
                "(%s) exist: a hole in the history, not an expiration; run fsck",
                top,
                ", ".join(map(str, left[:5])) + (", ..." if len(left) > 5 else ""),
            )
            return False
        time.sleep(wait)
    return False


def repair_marker_after(engine: Engine, first_kept: int) -> None:
    """After a run: a marker below the oldest version this run kept (two expirations
    raced and the lower marker was written last) moves up to it; the roots below are
    gone or unmarked, so the marker must not promise them. A marker whose root is gone
    (deleted by a faster run) moves up to the oldest root left.

    Checked again after writing: a faster run may delete the root between our check and
    our write, and finish its own repair before our write lands (no compare-and-swap).
    Every run deletes roots only before its own repair, so a root that exists after our
    write is either kept by every run or will be seen by a repair still to come."""
    for _ in range(REPAIR_ATTEMPTS):
        current = engine.roots.oldest_marker()
        target = first_kept if current is None or current < first_kept else current
        if not engine.roots.exists(target):
            # A faster expiration deleted it after this run read it (its decoded roots
            # are cached, so marking did not notice): every run deletes a prefix of the
            # roots, so the oldest one left is above `target` and all above it exist.
            target = engine.roots.oldest_version()
        if target != (current or 0):  # no marker means 0: nothing to write
            engine.storage.write(OLDEST_VERSION, str(target).encode())
        if engine.roots.exists(target):
            return
    log.warning(
        "%s: roots kept disappearing while it was repaired (%d attempts); the next "
        "expiration or fsck repairs it",
        OLDEST_VERSION,
        REPAIR_ATTEMPTS,
    )


__all__ = [
    "GONE_ROOT_WAITS",
    "REPAIR_ATTEMPTS",
    "mark_kept",
    "repair_marker_after",
    "write_marker",
]
