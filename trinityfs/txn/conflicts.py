"""What a transaction depends on, and the check of that against later commits.

SNAPSHOT: the keys it wrote must be unchanged, the namespaces it created objects in must
still exist, and a namespace it dropped must have gained no objects. SERIALIZABLE adds
every key and key range it read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trinityfs.errors import CommitConflictError

LAKEHOUSE_DEF_KEY = "lakehouse_def"


@dataclass
class Dependencies:
    """Keys and ranges whose change by another commit makes this one conflict."""

    written: set[str] = field(default_factory=set)
    must_exist: set[str] = field(default_factory=set)
    unchanged_ranges: list[tuple[str, str | None]] = field(default_factory=list)
    read_keys: set[str] = field(default_factory=set)
    read_ranges: list[tuple[str, str | None]] = field(default_factory=list)

    def validate(self, version: int, changes: dict[str, str | None], serializable: bool) -> None:
        """Raise CommitConflictError if `changes` (made by `version`) break this."""
        for key in sorted(changes):
            if key in self.written:
                raise CommitConflictError(key, version)
            if key in self.must_exist and changes[key] is None:
                raise CommitConflictError(
                    key, version, f"namespace key {key!r} was dropped by version {version}"
                )
            if _in_ranges(key, self.unchanged_ranges):
                raise CommitConflictError(
                    key,
                    version,
                    f"key {key!r}, which this transaction needs unchanged (an object name "
                    f"it checked, or a namespace it drops), was changed by version {version}",
                )
            if serializable and (key in self.read_keys or _in_ranges(key, self.read_ranges)):
                raise CommitConflictError(
                    key,
                    version,
                    f"key {key!r}, read by this serializable transaction, "
                    f"was changed by version {version}",
                )


def _in_ranges(key: str, ranges: list[tuple[str, str | None]]) -> bool:
    return any(lo <= key and (hi is None or key < hi) for lo, hi in ranges)
