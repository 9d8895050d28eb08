"""What expiration keeps: the retention policy, the choice of the oldest version to
keep, and the report of a run (the steps and their safety: `trinityfs/lifecycle/expire.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import (
    DEFAULT_VERSION_MAX_AGE_MILLIS,
    DEFAULT_VERSION_MIN_TO_KEEP,
    PROP_VERSION_MAX_AGE_MILLIS,
    PROP_VERSION_MIN_TO_KEEP,
)
from trinityfs.format.keys import KEY_CREATED_AT_MILLIS
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle.inventory import ROOT, StoredFile
from trinityfs.lifecycle.stamps import FUTURE_STAMP_MODES, KEEP, FutureStamp, first_holding
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.engine import Engine

MAX_MARGIN_MILLIS = 60_000


@dataclass(frozen=True)
class RetentionPolicy:
    max_age_millis: int
    min_versions: int
    grace_millis: int  # in effect: never below the floor
    grace_floor_millis: int = 0  # the longest a commit may take (retry budget, txn TTL)
    #: "keep": versions stamped in the future are aged by their stamps (kept until this
    #: clock passes them); "store-time": by the store's time of their roots
    future_stamps: str = KEEP

    @property
    def margin_millis(self) -> int:
        """Allowance for clock skew and in-flight requests, on top of the grace."""
        return min(MAX_MARGIN_MILLIS, self.grace_millis // 4)

    @classmethod
    def of(
        cls,
        ldef: LakehouseDef,
        max_age_millis: int | None = None,
        min_versions: int | None = None,
        grace_millis: int | None = None,
        future_stamps: str = KEEP,
    ) -> RetentionPolicy:
        """The LakehouseDef's settings, with the given overrides."""
        props = ldef.properties
        if max_age_millis is None:
            max_age_millis = int(
                props.get(PROP_VERSION_MAX_AGE_MILLIS, DEFAULT_VERSION_MAX_AGE_MILLIS)
            )
        if min_versions is None:
            min_versions = int(props.get(PROP_VERSION_MIN_TO_KEEP, DEFAULT_VERSION_MIN_TO_KEEP))
        if grace_millis is None:
            grace_millis = ldef.txn_ttl_millis
        for name, value, minimum in (
            ("max_age_millis", max_age_millis, 0),
            ("min_versions", min_versions, 1),
            ("grace_millis", grace_millis, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise InvalidArgumentError(f"{name} must be an int >= {minimum}, got {value!r}")
        if future_stamps not in FUTURE_STAMP_MODES:
            raise InvalidArgumentError(
                f"future_stamps must be one of {', '.join(FUTURE_STAMP_MODES)}, "
                f"got {future_stamps!r}"
            )
        # A commit in flight may have written its files up to this long ago.
        floor = commit_window_millis(ldef)
        return cls(max_age_millis, min_versions, max(grace_millis, floor), floor, future_stamps)


@dataclass
class ExpireReport:
    """What an expiration removed (or, for a dry run, would remove)."""

    dry_run: bool
    latest_version: int
    previous_oldest_version: int
    oldest_version: int
    kept_by: str  # which rule chose oldest_version
    policy: RetentionPolicy
    cutoff_millis: int
    removed: list[StoredFile] = field(default_factory=list)
    spared_young: list[StoredFile] = field(default_factory=list)
    unknown_files: list[StoredFile] = field(default_factory=list)
    live_transactions: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # referenced but absent (run fsck)
    marker_problems: list[str] = field(default_factory=list)  # what the markers got wrong
    future_stamp: FutureStamp | None = None  # a kept version stamped beyond this clock
    marked: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    @property
    def expired_versions(self) -> int:
        """Versions this run made unreadable (never negative: a true marker never
        moves back, so `oldest_version` is never below `previous_oldest_version`)."""
        return max(0, self.oldest_version - self.previous_oldest_version)

    @property
    def roots_removed(self) -> int:
        return sum(1 for f in self.removed if f.kind == ROOT)

    @property
    def files_removed(self) -> int:
        return len(self.removed)

    @property
    def bytes_removed(self) -> int:
        return sum(f.size for f in self.removed)

    def removed_by_kind(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for f in self.removed:
            entry = out.setdefault(f.kind, {"files": 0, "bytes": 0})
            entry["files"] += 1
            entry["bytes"] += f.size
        return dict(sorted(out.items()))

    def to_dict(self, *, files: bool = True) -> dict:
        """JSON-ready form; `files=False` leaves out the per-file lists (counts stay)."""
        out = {
            "dry_run": self.dry_run,
            "latest_version": self.latest_version,
            "previous_oldest_version": self.previous_oldest_version,
            "oldest_version": self.oldest_version,
            "expired_versions": self.expired_versions,
            "kept_by": self.kept_by,
            "policy": {
                "max_age_millis": self.policy.max_age_millis,
                "min_versions": self.policy.min_versions,
                "grace_millis": self.policy.grace_millis,
                "grace_floor_millis": self.policy.grace_floor_millis,
                "future_stamps": self.policy.future_stamps,
            },
            "cutoff_millis": self.cutoff_millis,
            "files_removed": self.files_removed,
            "bytes_removed": self.bytes_removed,
            "removed_by_kind": self.removed_by_kind(),
            "spared_young": len(self.spared_young),
            "unknown_files": len(self.unknown_files),
            "live_transactions": self.live_transactions,
            "missing": self.missing,
            "marker_problems": self.marker_problems,
            "future_stamp": self.future_stamp and self.future_stamp.to_dict(),
            "marked": self.marked,
            "requests": self.requests,
            "phase_seconds": {k: round(v, 4) for k, v in self.phase_seconds.items()},
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }
        if files:
            out["removed"] = [f.to_dict() for f in self.removed]
            out["spared_young_files"] = [f.to_dict() for f in self.spared_young]
            out["unknown"] = [f.to_dict() for f in self.unknown_files]
        return out


def stamps_of(engine: Engine) -> Callable[[int], int]:
    """created(version): the version's recorded commit time, each root read once."""
    cache: dict[int, int] = {}

    def created(version: int) -> int:
        if version not in cache:
            root = engine.roots.load(version)
            cache[version] = int(root.system.get(KEY_CREATED_AT_MILLIS, "0"))
        return cache[version]

    return created


def oldest_to_keep(
    created: Callable[[int], int],
    oldest: int,
    latest: int,
    now: int,
    policy: RetentionPolicy,
    cutoff: int,
    transaction_bases: list[int | None],
) -> tuple[int, str]:
    by_count = max(latest - policy.min_versions + 1, 0)
    by_age = first_holding(oldest, latest, lambda v: created(v) >= now - policy.max_age_millis)
    candidates = [(min(by_count, by_age), "retention")]
    if policy.grace_millis:
        first_young = first_holding(oldest, latest, lambda v: created(v) > cutoff)
        candidates.append((first_young - 1, "grace"))
    bases = [b for b in transaction_bases if b is not None]
    if bases:
        candidates.append((min(bases), "transaction"))
    keep, why = min(candidates)
    if keep <= oldest:
        return oldest, "marker" if keep < oldest else why
    return min(keep, latest), why


__all__ = ["MAX_MARGIN_MILLIS", "ExpireReport", "RetentionPolicy", "oldest_to_keep", "stamps_of"]
