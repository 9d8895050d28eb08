"""History checker: 8 processes x 200 commits on overlapping and disjoint keys, on a
local directory and on S3; every operation recorded and the history checked (see
history.py for what is checked). Then a smaller history under random storage faults,
where outcomes can be unknown and failed commits must have left nothing behind."""

from __future__ import annotations

import pytest
from faults import ERROR_AFTER, ERROR_BEFORE, SLOW, TIMEOUT, TIMEOUT_LANDED, Plan
from history import Workload, run_history
from lake_fixtures import SMALL_TREE

pytestmark = [pytest.mark.stress, pytest.mark.slow]

PROCS = 8
COMMITS = 200


def test_history(store, tmp_path, figures) -> None:
    # On a local directory, tiny nodes: commits flush and split under contention. On
    # S3 the default tree (nodes rarely written): a commit there costs ~12 requests to
    # a server that handles one at a time, and 1,600 commits must fit in CI.
    summary = run_history(
        store.url(),
        store.options,
        tmp_path,
        procs=PROCS,
        commits=COMMITS,
        seed=5,
        lake_options=SMALL_TREE if store.name == "local" else None,
        timeout=1500,
    )
    figures(**summary)
    assert summary["ok"] == PROCS * COMMITS
    # no failure but conflicts, and (rarely) a commit that lost the race to the other
    # writers MAX_ATTEMPTS times in a row: typed, and checked to have left nothing
    assert summary["failed"] == summary["conflicts"] + summary["retries_exhausted"]
    assert summary["retries_exhausted"] <= 0.01 * summary["transactions"]
    assert summary["unknown"] == 0
    assert summary["replays"] > 0 and summary["conflicts"] > 0  # there was contention
    assert summary["ok_overlapping"] > 0 and summary["ok_disjoint"] > 0


def test_history_under_storage_faults(tmp_path, figures) -> None:
    """4 processes x 60 commits, 2% of storage operations failing (error before or
    after the write, timeouts with and without the write landing, slow replies)."""
    plan = Plan(
        rate=0.02,
        random_kinds=(ERROR_BEFORE, ERROR_AFTER, TIMEOUT, TIMEOUT_LANDED, SLOW),
        delay=0.005,
        seed=11,
    )
    summary = run_history(
        str(tmp_path / "lake"),
        None,
        tmp_path,
        procs=4,
        commits=60,
        seed=11,
        workload=Workload(max_transactions_factor=20),
        fault_plan=plan,
        lake_options=SMALL_TREE,
    )
    figures(**summary)
    assert summary["ok"] == 4 * 60
    assert summary["failed"] > summary["conflicts"]  # faults made commits fail
