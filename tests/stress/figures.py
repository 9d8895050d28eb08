"""The figures the stress suites report (printed at the end of the run by conftest.py)."""

from __future__ import annotations

from typing import Any

FIGURES: dict[str, dict[str, Any]] = {}


def count(what: str) -> None:
    """Count one fuzz example of `what`."""
    examples = FIGURES.setdefault("fuzz examples", {"total": 0})
    examples[what] = examples.get(what, 0) + 1
    examples["total"] += 1
