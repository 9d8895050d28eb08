"""Fault injection: fail the k-th storage operation of representative commits and reads.

For every operation (a commit that splits, one that merges, a replace, a rollback, a
commit that loses a race and replays, and reads: open, describe, list, time travel,
history) a clean run is traced first. Then for every k and every way a store fails
(`faults.FAULTS`: error before the write, error after it landed, timeout with and
without the write landing, slow reply, truncated read), the operation runs again on a
fresh copy with that fault at operation k, and:

- the outcome is a success or a typed error (a `TrinityError`), never anything else;
- a slow reply is not an error;
- the lakehouse is always a prefix of the clean run's history: every version reads as in
  the clean run, versions are dense and every tree checks;
- an acknowledged commit is there; a commit that raised anything but
  AmbiguousWriteError is not (nothing half-done is visible); an ambiguous one is
  either there whole or not at all;
- a read that succeeded returned exactly what the clean run read;
- after a failure, the same handle (faults gone) retries and succeeds: no error leaves
  a handle wedged. (Except after a truncated read: the handle that read a short file
  keeps its bytes in the immutable-file cache, so there a fresh handle retries.)
- orphans are reclaimable.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import workload
from faults import FAULTS, SLOW, TRUNCATED, Plan, applies, inject
from lakecheck import check_versions, read_state, reclaim

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, TrinityError
from trinityfs.format.definitions import definition_to_json_dict
from trinityfs.storage import Storage

pytestmark = pytest.mark.stress


def _replayed_commit(lake: Lakehouse) -> None:
    txn = lake.transaction()
    txn.create_table("a", "raced", workload.props(gen="r"))
    winner = Lakehouse.open(lake.url, storage_options=workload.STORAGE_OPTIONS)
    winner.create_table("b", "winner")  # takes the version txn was going to create
    txn.commit()


def _serializable_replay(lake: Lakehouse) -> None:
    txn = lake.transaction(isolation="SERIALIZABLE")
    txn.list_tables("a")
    txn.replace_table("a", "t2", workload.props(gen="s"))
    winner = Lakehouse.open(lake.url, storage_options=workload.STORAGE_OPTIONS)
    winner.replace_table("b", "s1", workload.props(gen="w"))  # outside what txn read
    txn.commit()


@dataclass
class Operation:
    name: str
    run: Callable[[Lakehouse], Any]
    commits: bool
    retry: bool = True  # the same handle may run it again after a failure


OPERATIONS = [
    Operation("create table", lambda lake: lake.create_table("a", "new"), True),
    Operation("create 6 tables (split)", workload.STEPS[1][1], True),
    Operation("drop 4 tables (merge)", lambda lake: _drop_four(lake), True),
    Operation("replace table", lambda lake: lake.replace_table("a", "t3", {}), True),
    Operation("rollback", lambda lake: lake.rollback(lake.latest_version() - 2), True),
    Operation("commit replayed after a lost race", _replayed_commit, True, retry=False),
    Operation("serializable replay", _serializable_replay, True, retry=False),
    Operation("open", lambda lake: _open_handle(lake), False),
    Operation(
        "describe table",
        lambda lake: definition_to_json_dict(lake.describe_table("a", "t4")),
        False,
    ),
    Operation("list tables", lambda lake: lake.list_tables("a"), False),
    Operation("read an old version", lambda lake: read_state(lake.at(2)), False),
    Operation(
        "versions and changes",
        lambda lake: (
            [(v.version, v.rollback_from) for v in lake.versions()],
            [str(c) for c in lake.changes(lake.latest_version())],
        ),
        False,
    ),
]


def _open_handle(lake: Lakehouse) -> tuple[int, list[str]]:
    # what Lakehouse.open does (a new handle, the latest version), on the faulty storage
    opened = Lakehouse(lake.storage)
    return opened.latest_version(), opened.list_namespaces()


def _drop_four(lake: Lakehouse) -> None:
    with lake.transaction() as t:
        for i in range(4):
            t.drop_table("a", f"t{i}")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The starting lakehouse (copied for every case): depth >= 2, a few versions."""
    root = tmp_path_factory.mktemp("faults") / "base"
    lake = Lakehouse.create(
        str(root), storage_options=workload.STORAGE_OPTIONS, **workload.LAKE_OPTIONS
    )
    workload.setup(lake)
    return root


def _open(url: str) -> tuple[Lakehouse, Any]:
    storage = Storage(url, workload.STORAGE_OPTIONS)
    wrapper = inject(storage, Plan())
    return Lakehouse(storage), wrapper


def _clean(op: Operation, base: Path, where: Path) -> tuple[list, Any, dict[int, Any]]:
    shutil.copytree(base, where)
    lake, wrapper = _open(str(where))
    wrapper.plan = Plan(trace=True)
    result = op.run(lake)
    trace = list(wrapper.trace)
    wrapper.enabled = False
    states = {v: read_state(lake.at(v)) for v in range(lake.latest_version() + 1)}
    shutil.rmtree(where)
    return trace, result, states


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_fault_at_every_operation(op: Operation, base: Path, tmp_path: Path, figures) -> None:
    trace, clean_result, states = _clean(op, base, tmp_path / "clean")
    clean_latest = max(states)
    outcomes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    unknown_landed = 0
    for index, kind_op, loc in trace:
        for kind in FAULTS:
            if not applies(kind, kind_op):
                continue
            where = f"{op.name}: {kind} at operation {index} ({kind_op} {loc})"
            url = tmp_path / f"case-{index}-{kind}"
            shutil.copytree(base, url)
            lake, wrapper = _open(str(url))
            wrapper.plan = Plan(kind=kind, at=index, delay=0.005)
            try:
                result = op.run(lake)
            except TrinityError as exc:
                outcome = "unknown" if isinstance(exc, AmbiguousWriteError) else "failed"
                errors[type(exc).__name__] += 1
                assert kind != SLOW, f"{where}: a slow reply raised {exc!r}"
            except Exception as exc:  # pragma: no cover - what this test exists to catch
                raise AssertionError(f"{where}: untyped {type(exc).__name__}: {exc}") from exc
            else:
                outcome = "ok"
                if not op.commits:
                    assert result == clean_result, f"{where}: read returned something else"
            outcomes[outcome] += 1
            wrapper.enabled = False

            fresh = Lakehouse.open(str(url), storage_options=workload.STORAGE_OPTIONS)
            latest = check_versions(fresh)
            assert latest <= clean_latest, f"{where}: versions beyond the clean run"
            for v in range(latest + 1):
                assert read_state(fresh.at(v)) == states[v], f"{where}: version {v} differs"
            if op.commits and outcome == "ok":
                assert latest == clean_latest, f"{where}: acknowledged commit missing"
            if op.commits and outcome == "failed":
                assert latest < clean_latest, f"{where}: a failed commit is visible"
            unknown_landed += outcome == "unknown" and latest == clean_latest
            if kind == TRUNCATED:
                lake = fresh  # a truncated file's bytes stay cached in the handle that read it
            if (outcome != "ok" and op.retry and latest < clean_latest) or not op.commits:
                again = op.run(lake)  # the same handle, faults gone
                if not op.commits:
                    assert again == clean_result, f"{where}: the retry read something else"
                else:
                    assert read_state(lake.at()) == states[clean_latest], f"{where}: retry"
            reclaim(fresh)
            shutil.rmtree(url)
    figures(
        operations_traced=len(trace),
        faults_injected=sum(outcomes.values()),
        outcomes=dict(outcomes),
        errors=dict(errors),
        unknown_landed=unknown_landed,
        acknowledged_lost=0,
    )
