"""How fresh "latest" must be: the policy knob of a Lakehouse, and what it remembers.

By default (`max_staleness_seconds=0`) every question about the latest version asks
storage (txn/roots.py finds it; starting from the version this process saw last is the
business of that layer). A reader that accepts answers up to N seconds old opts in with
`Freshness(max_staleness_seconds=N)`: within N seconds of the last check, "latest" is
answered from memory with zero storage requests. A commit through the Lakehouse counts
as seen, so within the bound a writer still reads its own writes.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from trinityfs.errors import InvalidArgumentError


@dataclass(frozen=True)
class Freshness:
    """Freshness policy for "latest": how old (seconds) a remembered answer may be."""

    max_staleness_seconds: float = 0.0

    def __post_init__(self) -> None:
        value = self.max_staleness_seconds
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or math.isnan(value)
            or value < 0
        ):
            raise InvalidArgumentError(
                f"max_staleness_seconds is a number of seconds >= 0, not {value!r}"
            )


class LatestTracker:
    """The highest version seen and when storage last confirmed the latest."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._version: int | None = None
        self._checked = -math.inf
        self.answered_from_memory = 0  # counts answers given with no storage request

    @property
    def version(self) -> int | None:
        return self._version

    def remembered(self, policy: Freshness) -> int | None:
        """The remembered latest when it is within the policy's bound, else None."""
        if policy.max_staleness_seconds <= 0:
            return None
        with self._lock:
            if self._version is None:
                return None
            if self._clock() - self._checked > policy.max_staleness_seconds:
                return None
            self.answered_from_memory += 1
            return self._version

    def checked(self, version: int) -> int:
        """Storage said `version` is the latest: remember it (and when) and return it."""
        with self._lock:
            self._checked = self._clock()
            self._version = version
            return version

    def confirmed_within(self, seconds: float) -> int | None:
        """The latest version storage confirmed (or this process committed) less than
        `seconds` ago, else None."""
        with self._lock:
            if self._version is None or self._clock() - self._checked >= seconds:
                return None
            return self._version

    def saw(self, version: int) -> None:
        """A version known to exist (a commit of ours): remembered answers are not below it."""
        with self._lock:
            if self._version is None or version > self._version:
                self._version = version
                self._checked = self._clock()


__all__ = ["Freshness", "LatestTracker"]
