"""The corruption matrix (issue 10 case 9) as a permanent suite; see corruption.py.

Every case must be detected (an error naming the file) or give the pristine answer:
0 silent wrong answers, 0 errors that do not name the damaged file, 0 failed reads that
fsck or the independent checker call clean, 0 commits landing on a tree whose node files
or lakehouse definition fail verification. With whole-tree verification (`verify="tree"`)
0 commits land on a tree that fails verification at all: every case where the default
commit carries the damaged file forward untouched is refused, naming the file.
"""

from __future__ import annotations

import pytest
from corruption import MATRIX_FIGURES, SILENT, Figures, run_matrix


def _assert_clean(figures: Figures, name: str) -> None:
    counts = figures.counts()
    MATRIX_FIGURES[name] = counts
    failures = figures.failures()
    assert not failures, "\n".join(f"{o.case}: {o.read}/{o.commit} {o.detail}" for o in failures)
    assert counts.get(f"read {SILENT}", 0) == 0
    assert counts.get("commit LANDED-CORRUPT", 0) == 0
    assert counts.get("commit LANDED-WRONG", 0) == 0
    assert counts.get("commit reading it READ-DAMAGED-LANDED", 0) == 0
    # verify="tree": refused or landed fully verified, never over damage
    strict = {k: n for k, n in counts.items() if k.startswith("strict commit ")}
    assert set(strict) <= {
        "strict commit refused",
        "strict commit landed-verified",
        "strict commit where the default one carried damage: refused",
    }, strict
    carried = counts.get("commit landed-carrying-damage", 0)
    assert strict.get("strict commit where the default one carried damage: refused", 0) == carried
    assert counts["strict commit refused"] >= counts.get("commit refused", 0) + carried
    # every file kind and every damage kind ran, and corruption was really detected
    assert counts["read detected"] > counts["cases"] // 2


def test_corruption_matrix_quick(tmp_path):
    figures = run_matrix(
        tmp_path,
        flips=1,
        kinds=(
            "root (latest)",
            "leaf",
            "table definition",
            "namespace definition",
            "lakehouse definition",
            "hint",
        ),
    )
    _assert_clean(figures, "corruption matrix (quick)")


@pytest.mark.stress
@pytest.mark.slow
def test_corruption_matrix_full(tmp_path):
    figures = run_matrix(tmp_path, flips=18)
    _assert_clean(figures, "corruption matrix (18 flips per file)")
    assert figures.counts()["cases"] >= 10 * 22
