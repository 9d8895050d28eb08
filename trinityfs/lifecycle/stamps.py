"""Versions stamped in the future (a writer whose clock ran ahead).

A version's ``created_at_millis`` is its writer's clock, and every later version is
stamped after it (max(now, previous + 1)). One writer a year ahead makes that version
and every later one look younger than the max age and the grace period for a year, so
expiration by age keeps them until this clock passes the stamp: storage grows, quietly.
By default expiration never guesses another age for them (deleting on a guess is not
undoable); it and fsck say which version is stamped how far ahead, and name the way out:
``future_stamps="store-time"`` (``trinityfs expire --future-stamps store-time``) ages
such versions by the time the store gave their roots (`store_aged`), the clock the
sweep already trusts for every other file (docs/FORMAT-CHOICES.md, "Versions stamped in
the future").

The other way round, an expiring process whose clock runs ahead of the store's would see
the writers' young files (stamped by the store) as old: `clock_ahead` measures it on the
store and expiration moves its cutoff back by as much.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from trinityfs.errors import StorageError
from trinityfs.storage import Storage
from trinityfs.storage.base import PROBE_PREFIX

log = logging.getLogger(__name__)

#: a stamp this far after this clock's now is "in the future" (the same minute time
#: travel allows, trinityfs/catalog/versions.py CLOCK_SKEW_MILLIS)
FUTURE_STAMP_MILLIS = 60_000
#: what expiration does with versions stamped in the future: age them by their stamps
#: (keep them until this clock passes), or by the store's time of their roots
KEEP, STORE_TIME = "keep", "store-time"
FUTURE_STAMP_MODES = (KEEP, STORE_TIME)


@dataclass(frozen=True)
class FutureStamp:
    """The first kept version stamped beyond this clock's now."""

    version: int
    created_at_millis: int
    now_millis: int

    @property
    def ahead_millis(self) -> int:
        return self.created_at_millis - self.now_millis

    def message(self, max_age_millis: int | None = None) -> str:
        """One line naming the version, its stamp and what it holds back."""
        if max_age_millis is None:
            until = f"{_iso(self.created_at_millis)} plus the max age"
        else:
            until = _iso(self.created_at_millis + max_age_millis)
        return (
            f"version {self.version} is stamped {self.created_at_millis} "
            f"({_iso(self.created_at_millis)}), {_span(self.ahead_millis)} ahead of this "
            f"clock (a writer's clock ran ahead): expiration by age keeps it and every "
            f"later version until this clock passes {until}; `expire --future-stamps "
            f"store-time` ages them by the store's time of their roots instead"
        )

    def store_time_message(self) -> str:
        """One line for a run that aged them by the store's time (`STORE_TIME`)."""
        return (
            f"version {self.version} is stamped {self.created_at_millis} "
            f"({_iso(self.created_at_millis)}), {_span(self.ahead_millis)} ahead of this "
            f"clock: it and every later version were aged by the store's time of their roots "
            f"(--future-stamps store-time)"
        )

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "created_at_millis": self.created_at_millis,
            "ahead_millis": self.ahead_millis,
        }


def future_stamp(
    created: Callable[[int], int], oldest: int, latest: int, now: int
) -> FutureStamp | None:
    """The first version in oldest..latest whose stamp `created(v)` is more than
    FUTURE_STAMP_MILLIS after `now` (stamps never go down: a binary search), or None."""
    first = first_holding(oldest, latest, lambda v: created(v) > now + FUTURE_STAMP_MILLIS)
    if first > latest:
        return None
    return FutureStamp(first, created(first), now)


def store_aged(
    created: Callable[[int], int],
    first: int,
    floor: int,
    latest: int,
    store_millis: Callable[[int], int | None],
    ahead: int,
    now: int,
) -> Callable[[int], int]:
    """created(v), except from `first` (the first version stamped in the future) on:
    the time the store gave v's root (`store_millis`, its mtime) plus how far this clock
    runs ahead of the store's (`ahead`), never below `floor` (the stamp before `first`)
    and never going down from one version to the next (a running maximum), so that
    bisection over it stays valid. A root with no store time (not listed: newer than the
    listing; a store that keeps none) counts as created `now`. Each adjustment only makes
    a version look younger: what it keeps is never less than the store says."""
    ages: list[int] = []
    running = floor
    for version in range(first, latest + 1):
        stored = store_millis(version)
        running = max(running, now if stored is None else stored + ahead)
        ages.append(running)

    def aged(version: int) -> int:
        return created(version) if version < first else ages[version - first]

    return aged


def first_holding(
    lo: int, hi: int, holds: Callable[[int], bool], *, holds_at_hi: bool = False
) -> int:
    """The first version in lo..hi for which `holds`, else hi+1: a binary search, so
    `holds` must be monotone on lo..hi (false...false true...true). O(log(hi - lo))
    calls; one fewer when the caller knows `holds(hi)` (`holds_at_hi`). The one
    bisection over versions (also `trinityfs.catalog.history` and `.versions`)."""
    if holds_at_hi:
        lo = min(lo, hi)
    elif lo > hi or not holds(hi):
        return hi + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _iso(millis: int) -> str:
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return f"{millis} ms after 1970"


def _span(millis: int) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if millis >= size:
            return f"{millis / size:.1f}{unit}"
    return f"{millis}ms"


def clock_ahead(storage: Storage, deleting: str) -> int:
    """How far this clock runs ahead of the store's (`Storage.clock_ahead_millis`: a
    probe file written, its mtime read, deleted). Called only right before something
    is deleted (`deleting`: "expiration would delete ..."): a dry run, or a run that
    deletes nothing, never writes. A store that refuses the probe (read-only
    credentials) is a StorageError that says so."""
    try:
        ahead = storage.clock_ahead_millis()
    except StorageError as e:
        raise StorageError(
            f"{storage.url}: {deleting}, and must first write a "
            f"probe file ({PROBE_PREFIX}<uuid>) to measure how far this clock runs ahead of "
            f"the store's, but the store refused it (read-only credentials?): {e}"
        ) from e
    if ahead > 1000:
        log.warning(
            "this clock runs %.1f s ahead of the store's: expiration's cutoff moves back by as "
            "much, so files the writers made within the grace period stay",
            ahead / 1000,
        )
    return ahead
