"""Times set through the mount (utimens: `touch -d`, `cp -p`, `rsync -t`/`-a`, `tar x`) on
tables, views and namespaces of the latest version.

An entry's mtime is the commit time of the version that made it what it is. Tools that
copy a tree set each destination's mtime to the source's and compare the two on the next
run (rsync's quick check: size and mtime). If the mount ignored utimens, every such file
would be sent again on every run: nothing is committed (the content is unchanged), but
each one is read, sent, parsed and compared again, and `rsync -i` lists it each time.

So the mount remembers the times set on an entry together with its definition location
(which changes with every committed change of it): they are shown for as long as the
entry keeps that definition, in this mount. Any committed change, by anyone, brings the
commit time back. Memory only, bounded (`CAPACITY` entries, least recently used go
first): another mount, or this one after a remount, shows commit times again.
"""

from __future__ import annotations

import time

from trinityfs.lru import LRU

CAPACITY = 100_000
# utimensat's special nanosecond values, as libfuse 3 passes them (sec 0): use mfusepy's
# integer nanoseconds (sec * 1e9 + nsec), so they arrive as these numbers
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2

Key = tuple[str, str]  # (namespace, name); name "" for the namespace itself


def requested(
    times: tuple[int, int] | None, current: tuple[int, int], now_ns: int | None = None
) -> tuple[int, int]:
    """The (atime, mtime) in ns a utimens call asks for, given the `current` ones: None
    means now (`touch`), UTIME_NOW now, UTIME_OMIT unchanged."""
    now = time.time_ns() if now_ns is None else now_ns
    if times is None:
        return now, now
    out = []
    for asked, was in zip(times, current, strict=True):
        out.append(now if asked == UTIME_NOW else was if asked == UTIME_OMIT else int(asked))
    return out[0], out[1]


class SetTimes:
    """Times set on entries, valid while the entry keeps the definition they were set on."""

    def __init__(self, capacity: int = CAPACITY):
        self._set: LRU[Key, tuple[str, int, int]] = LRU(capacity)

    def set(self, key: Key, location: str, atime_ns: int, mtime_ns: int) -> None:
        """Show (atime, mtime) for `key` while its definition is at `location`."""
        self._set.put(key, (location, atime_ns, mtime_ns))

    def location(self, key: Key) -> str | None:
        """The location `key`'s times were set on (None: no times set)."""
        hit = self._set.get(key)
        return None if hit is None else hit[0]

    def get(self, key: Key, location: str | None) -> tuple[int, int] | None:
        """(atime, mtime) set on `key` at `location`; None when none were, or when they
        were set on another definition (the entry has changed since, or `location` is of
        an older version than the one they were set on)."""
        hit = self._set.get(key)
        if hit is None or hit[0] != location:
            return None
        return hit[1], hit[2]

    def forget(self, key: Key) -> None:
        self._set.pop(key)


__all__ = ["UTIME_NOW", "UTIME_OMIT", "SetTimes", "requested"]
