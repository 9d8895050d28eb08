"""What a transaction depends on, and the check of that against later commits.

SNAPSHOT: the keys it wrote must be unchanged, the namespaces it created objects in must
still exist, and a namespace it dropped must have gained no objects. SERIALIZABLE adds
every key and key range it read. A written key whose write commutes (txn/commute.py)
is not a conflict by itself: it is marked for re-application onto the newer version.
Errors name objects as users do (namespace 'ns', table 'ns.t'), never padded keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from trinityfs.errors import CommitConflictError
from trinityfs.txn.commute import LAKEHOUSE_DEF_KEY, Reapply, describe_key

__all__ = ["LAKEHOUSE_DEF_KEY", "Dependencies"]


@dataclass
class Dependencies:
    """Keys and ranges whose change by another commit makes this one conflict."""

    written: set[str] = field(default_factory=set)
    must_exist: set[str] = field(default_factory=set)
    unchanged_keys: set[str] = field(default_factory=set)
    unchanged_ranges: list[tuple[str, str | None]] = field(default_factory=list)
    read_keys: set[str] = field(default_factory=set)
    read_ranges: list[tuple[str, str | None]] = field(default_factory=list)
    # written keys whose write can be re-applied on a newer version, and those to redo
    # (process-local: a saved distributed transaction falls back to conflicting)
    reapply: dict[str, Reapply] = field(default_factory=dict, compare=False)
    to_reapply: set[str] = field(default_factory=set, compare=False)
    describe: Callable[[str], str] = field(
        default=lambda key: describe_key(key, None), compare=False
    )

    def validate(self, version: int, changes: dict[str, str | None], serializable: bool) -> None:
        """Raise CommitConflictError if `changes` (made by `version`) break this."""
        for key in sorted(changes):
            what = self.describe(key)
            if key in self.written:
                if key not in self.reapply:
                    raise CommitConflictError(
                        key, version, f"commit conflict: {what} was changed by version {version}"
                    )
                self.to_reapply.add(key)
            if key in self.must_exist and changes[key] is None:
                raise CommitConflictError(
                    key, version, f"commit conflict: {what} was dropped by version {version}"
                )
            if key in self.unchanged_keys or _in_ranges(key, self.unchanged_ranges):
                raise CommitConflictError(
                    key,
                    version,
                    f"commit conflict: {what}, which this transaction needs unchanged (an "
                    f"object name it checked, or a namespace it drops), was changed by "
                    f"version {version}",
                )
            if serializable and (key in self.read_keys or _in_ranges(key, self.read_ranges)):
                raise CommitConflictError(
                    key,
                    version,
                    f"commit conflict: {what}, read by this serializable transaction, "
                    f"was changed by version {version}",
                )


def _in_ranges(key: str, ranges: list[tuple[str, str | None]]) -> bool:
    return any(lo <= key and (hi is None or key < hi) for lo, hi in ranges)
