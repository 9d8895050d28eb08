"""Figures of the integrity suites, printed at the end of the run.

When ``TRINITYFS_STRESS_FIGURES`` names a file they are appended to it as JSON lines,
like the stress suites' figures.
"""

from __future__ import annotations

import json
import os

from corruption import MATRIX_FIGURES


def pytest_terminal_summary(terminalreporter) -> None:
    if not MATRIX_FIGURES:
        return
    terminalreporter.section("corruption matrix figures")
    for name, numbers in MATRIX_FIGURES.items():
        terminalreporter.write_line(f"{name}: {json.dumps(numbers)}")
    target = os.environ.get("TRINITYFS_STRESS_FIGURES")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            for name, numbers in MATRIX_FIGURES.items():
                f.write(json.dumps({"test": name, **numbers}) + "\n")
