"""The one bisection over versions (`lifecycle.stamps.first_holding`), which the
catalog's history (last_changed, created) uses too instead of a copy of its own."""

from __future__ import annotations

import random

from trinityfs.catalog import history
from trinityfs.lifecycle.stamps import first_holding


def _counting(first_true: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def holds(v: int) -> bool:
        calls.append(v)
        return v >= first_true

    return calls, holds


def test_matches_a_linear_scan() -> None:
    rng = random.Random(7)
    for _ in range(500):
        lo = rng.randrange(0, 50)
        hi = lo + rng.randrange(0, 60)
        first_true = rng.randrange(lo, hi + 3)
        _, holds = _counting(first_true)
        expected = next((v for v in range(lo, hi + 1) if holds(v)), hi + 1)
        assert first_holding(lo, hi, holds) == expected
        if expected <= hi:
            calls, holds = _counting(first_true)
            assert first_holding(lo, hi, holds, holds_at_hi=True) == expected
            assert hi not in calls  # the caller said so: not asked again
            assert len(calls) <= (hi - lo).bit_length()


def test_known_to_hold_at_hi_with_lo_above_it() -> None:
    """history's case when the oldest version moved above `at` meanwhile: `at` itself."""
    calls, holds = _counting(0)
    assert first_holding(9, 5, holds, holds_at_hi=True) == 5
    assert calls == []
    assert first_holding(9, 5, holds) == 6  # nothing in an empty range


def test_the_catalog_keeps_no_copy() -> None:
    assert history.first_holding is first_holding
    assert not hasattr(history, "first_of_run")
