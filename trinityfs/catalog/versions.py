"""A lakehouse's versions: their times, time travel by timestamp, change sets and diffs.

Each answer reads roots only (and, for change sets, the version before): no definition
file is opened. `Lakehouse` delegates here so the version semantics live once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from trinityfs.catalog.expired import check_not_expired, expired_error, load_root
from trinityfs.catalog.model import Change, ObjectRef, VersionInfo
from trinityfs.errors import InvalidArgumentError, VersionNotFoundError
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_ROLLBACK_FROM_ROOT,
    KeyCodec,
)
from trinityfs.format.paths import parse_root_node_file, root_node_file
from trinityfs.lifecycle.stamps import first_holding
from trinityfs.txn.engine import Engine, diff_snapshots, now_millis


def version_info(engine: Engine, version: int) -> VersionInfo:
    """When `version` was committed, and the version a rollback restored (if it is one)."""
    root = load_root(engine.roots, version)
    rollback = root.system.get(KEY_ROLLBACK_FROM_ROOT)
    return VersionInfo(
        version,
        int(root.system.get(KEY_CREATED_AT_MILLIS, "0")),
        None if rollback is None else parse_root_node_file(rollback),
    )


def version_at(engine: Engine, timestamp: datetime | int, latest: Callable[[], int]) -> int:
    """The last version committed at or before `timestamp` (datetime or epoch millis).

    An expiration that moves the oldest readable version during the search can make it
    land on a version just removed (its root still in memory): the search then runs
    again from the new oldest version, so the answer is a readable version.
    """
    millis = to_millis(timestamp)
    now = now_millis()
    oldest = engine.roots.oldest_version
    now_oldest = oldest()
    for _attempt in range(_SEARCHES):
        began = now_oldest
        try:
            found = _search(engine, millis, began, latest)
        except VersionNotFoundError:  # a version it looked at was expired meanwhile?
            now_oldest = oldest()
            if now_oldest == began:
                raise
            continue
        now_oldest = oldest()
        if found >= now_oldest:
            return _unless_skewed(engine, found, millis, now, latest)
    raise VersionNotFoundError(
        f"no readable version at or before {format_millis(millis)}: expiration moved the "
        f"oldest readable version {_SEARCHES} times during the search (now {now_oldest})"
    )


_SEARCHES = 3
#: how far a recorded commit time may lie beyond this clock's now before the version
#: after the one a time selects is taken for a committer's clock running ahead
CLOCK_SKEW_MILLIS = 60_000


def _unless_skewed(
    engine: Engine, found: int, millis: int, now: int, latest: Callable[[], int]
) -> int:
    """`found`, unless the version after it records a commit time beyond this clock's
    now: its committer's clock ran ahead (every later version is stamped after it), so
    the recorded times cannot tell whether it landed before `millis`. Then a time at or
    after now selects the latest version (every version there is was committed before
    now), and an earlier one is refused (VersionNotFoundError) rather than answered
    with a version that may be wrong."""
    newest = latest()
    if found >= newest:
        return found
    recorded = version_info(engine, found + 1).created_at_millis
    if recorded <= now + CLOCK_SKEW_MILLIS:
        return found
    if millis >= now:
        return newest
    raise VersionNotFoundError(
        f"which version was the latest at {format_millis(millis)} cannot be told: "
        f"version {found + 1} records its commit at {format_millis(recorded)}, after "
        f"this clock's now ({format_millis(now)}; its committer's clock ran ahead), "
        "and every later version is stamped after it; select a version by number"
    )


def _search(engine: Engine, millis: int, lo: int, latest: Callable[[], int]) -> int:
    """One search from `lo`, the oldest readable version when it began."""
    hi = latest()
    created = lambda v: version_info(engine, v).created_at_millis  # noqa: E731
    first = lo
    if created(lo) > millis:
        raise VersionNotFoundError(
            f"no version at or before {format_millis(millis)}: the oldest readable "
            f"version {lo} was committed at {format_millis(created(lo))}"
        )
    # times are monotonic in versions: the last one at or before `millis` precedes the
    # first one after it
    lo = first_holding(lo, hi, lambda v: created(v) > millis) - 1
    # A foreign writer may have broken monotonicity: walk previous_root to be sure.
    while lo > first and created(lo) > millis:
        lo -= 1
    newest = latest()
    while lo < newest and created(lo + 1) <= millis:
        lo += 1
    return lo


def changes(engine: Engine, version: int) -> list[Change]:
    """What `version` changed, from its root's own messages."""
    version = checked_version(version)
    load_root(engine.roots, version)  # not committed yet, or lost: said as such
    oldest = engine.roots.oldest_version()
    if version < oldest:  # its root may still be in memory: it is not readable
        raise expired_error(version, oldest)
    if version == oldest:  # the version before it is gone: all it holds is new
        after = engine.snapshot(version)
        return _classify(
            {k: (None, v) for k, v in after.items()},
            KeyCodec.from_lakehouse_def(after.lakehouse_def),
        )
    before = engine.snapshot(version - 1)
    changed = engine.changes(version)
    diff = {k: (before.get(k) if k != KEY_LAKEHOUSE_DEF else None, v) for k, v in changed.items()}
    diff = {k: (o, n) for k, (o, n) in diff.items() if o != n or k == KEY_LAKEHOUSE_DEF}
    return _classify(diff, KeyCodec.from_lakehouse_def(before.lakehouse_def))


def diff(engine: Engine, from_version: int, to_version: int) -> list[Change]:
    """Objects created, replaced or dropped going from one version to another."""
    from_version, to_version = checked_version(from_version), checked_version(to_version)
    check_not_expired(min(from_version, to_version), engine.roots.oldest_version)
    load_root(engine.roots, from_version)  # not committed yet, or lost: said as such
    load_root(engine.roots, to_version)
    old, new = engine.snapshot(from_version), engine.snapshot(to_version)
    return _classify(diff_snapshots(old, new), KeyCodec.from_lakehouse_def(new.lakehouse_def))


def checked_version(version: int) -> int:
    """`version` when it is a version number (an int in 0..2^64-1), else
    InvalidArgumentError naming it, before it is compared with anything."""
    root_node_file(version)
    return version


def _classify(diff: dict[str, tuple[str | None, str | None]], keys: KeyCodec) -> list[Change]:
    """Changes of objects from key -> (old location, new location)."""
    out: list[Change] = []
    for key in sorted(diff):
        if key == KEY_LAKEHOUSE_DEF:
            continue
        old, new = diff[key]
        decoded = keys.decode(key)
        ref = ObjectRef(decoded.namespace, decoded.name, decoded.kind)
        action = "dropped" if new is None else ("created" if old is None else "replaced")
        out.append(Change(action, ref))
    return out


def to_millis(timestamp: datetime | int) -> int:
    """Epoch milliseconds of a timezone-aware datetime or a number; else a typed error."""
    if isinstance(timestamp, datetime):
        if timestamp.tzinfo is None:
            raise InvalidArgumentError(
                "timestamps must be timezone-aware (e.g. 2026-01-01T00:00:00Z)"
            )
        try:
            return int(timestamp.timestamp() * 1000)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidArgumentError(f"timestamp {timestamp} is out of range: {exc}") from None
    if isinstance(timestamp, int | float) and not isinstance(timestamp, bool):
        try:
            return int(timestamp)
        except (OverflowError, ValueError):
            pass
    raise InvalidArgumentError(
        f"a timestamp is a timezone-aware datetime or epoch milliseconds, not {timestamp!r:.80}"
    )


def format_millis(millis: int) -> str:
    """An ISO time for messages; epoch milliseconds when out of datetime's range."""
    try:
        return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return f"{millis} ms since the epoch"


__all__ = [
    "changes",
    "checked_version",
    "diff",
    "format_millis",
    "to_millis",
    "version_at",
    "version_info",
]
