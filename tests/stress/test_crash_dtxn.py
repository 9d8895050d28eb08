"""Crash injection into distributed transactions: SIGKILL at every storage operation of
a save, a commit and an abort (tests/stress/faults.py, as test_crash.py does for plain
commits).

A lakehouse holds a saved transaction staging table ``ns.staged``. For every operation
k of a clean run of the step, a fresh copy is given to a child process that loads the
transaction and runs the step, killed before, after or half-way through operation k.
Afterwards, from a new handle:

- versions are dense and check; the commit landed whole (the next version, with
  ``ns.staged``) or not at all; a save or an abort never commits;
- the transaction's outcome can be learnt: loading it gives it back (then it commits or
  aborts), or says it was committed (naming the version), or that it is gone (aborted,
  or committed and its file removed), or that a closing claim is held (the process that
  took it stopped before its root landed: docs/FORMAT-CHOICES.md "Closing a distributed
  transaction"; removing the claim, the documented repair, lets it close);
- a plain commit lands and fsck is ok.
"""

from __future__ import annotations

import shutil
import signal
import uuid
from collections import Counter
from pathlib import Path

import pytest
from dtxn_crash_child import STORAGE_OPTIONS, TXN_ID, crash_child, step
from faults import Plan, applies, inject
from lakecheck import check_versions
from test_crash import KINDS, ctx  # noqa: F401  (the fork-server fixture)

from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError, TransactionNotFoundError
from trinityfs.lifecycle.dtxn import claim_location
from trinityfs.storage import Storage

pytestmark = pytest.mark.stress

PHASES = ("save", "commit", "abort")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, int]:
    """A lakehouse with a saved distributed transaction (-> its directory, latest)."""
    root = tmp_path_factory.mktemp("dtxn") / "base"
    lake = Lakehouse.create(str(root), storage_options=STORAGE_OPTIONS)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id=TXN_ID)
    txn.create_table("ns", "staged", {"properties": {"k": "1"}})
    txn.save()
    return root, lake.latest_version()


def _trace(root: Path, phase: str, tmp: Path) -> list[tuple[int, str, str]]:
    copy = tmp / f"clean-{phase}"
    shutil.copytree(root, copy)
    storage = Storage(str(copy), STORAGE_OPTIONS)
    wrapper = inject(storage, Plan(trace=True))
    step(Lakehouse(storage), phase)
    return list(wrapper.trace)


def _outcome(url: str, phase: str, start: int, where: str) -> str:
    """Check the lakehouse after a crash and close the transaction; -> what was found."""
    lake = Lakehouse.open(url, storage_options=STORAGE_OPTIONS)
    latest = check_versions(lake)
    committed = "staged" in lake.list_tables("ns")
    assert latest in (start, start + 1), f"{where}: latest {latest}"
    assert committed == (latest == start + 1), f"{where}: version {latest} is not the commit"
    assert phase == "commit" or not committed, f"{where}: a {phase} committed"
    if committed:
        assert lake.describe_table("ns", "staged").properties == {"k": "1"}
    try:
        txn = lake.load_distributed(TXN_ID)
    except TransactionClosedError as exc:
        if committed:
            assert f"committed as version {latest}" in str(exc), f"{where}: {exc}"
            found = "said committed"
        else:
            assert "being (or was) committed or aborted" in str(exc), f"{where}: {exc}"
            # the process holding the claim stopped: the documented repair
            Storage(url, STORAGE_OPTIONS).delete(claim_location(TXN_ID))
            txn = lake.load_distributed(TXN_ID)
            found = "claim held"
        if not committed:
            _close(lake, txn, phase, where)
    except TransactionNotFoundError:
        assert committed or phase == "abort", f"{where}: the transaction is gone"
        found = "gone"
    else:
        assert not committed, f"{where}: a committed transaction loads again"
        _close(lake, txn, phase, where)
        found = "loadable"
    assert lake.create_table("ns", f"after-{uuid.uuid4().hex[:6]}") == lake.latest_version()
    report = lake.fsck()
    assert report.ok, f"{where}: {[p.to_dict() for p in report.errors]}"
    return found


def _close(lake: Lakehouse, txn, phase: str, where: str) -> None:
    if phase == "abort":
        txn.abort()
        with pytest.raises(TransactionNotFoundError):
            lake.load_distributed(TXN_ID)
    else:
        version = txn.commit()
        assert "staged" in lake.at(version=version).list_tables("ns"), where


@pytest.mark.parametrize("phase", PHASES)
def test_sigkill_at_every_operation_of_a_distributed_transaction(
    ctx,  # noqa: F811
    base,
    phase,
    tmp_path,
    figures,
):
    root, start = base
    trace = _trace(root, phase, tmp_path)
    found: Counter = Counter()
    for index, op, loc in trace:
        for kind in KINDS:
            if not applies(kind, op):
                continue
            url = str(tmp_path / f"run-{index}-{kind}")
            shutil.copytree(root, url)
            acks = tmp_path / f"acks-{uuid.uuid4().hex}"
            acks.touch()
            child = ctx.Process(target=crash_child, args=(url, phase, kind, index, str(acks)))
            child.start()
            child.join(60)
            where = f"{phase}: {kind} at operation {index} ({op} {loc})"
            assert not child.is_alive(), f"{where}: child hung"
            assert child.exitcode == -signal.SIGKILL, f"{where}: exit code {child.exitcode}"
            assert acks.read_text() == "", where
            found[_outcome(url, phase, start, where)] += 1
            shutil.rmtree(url)
    figures(phase=phase, operations_traced=len(trace), outcomes=dict(found))
    assert sum(found.values()) >= len(trace)
    if phase == "commit":  # killed after the root landed, and before it
        assert found["said committed"] + found["gone"] > 0 and found["loadable"] > 0, found
