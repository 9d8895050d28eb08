"""One transaction object used by two threads at once.

Two threads calling `commit()` of one transaction both wrote its files and raced for
the next root: one landed it, the other lost the race to its own twin, replayed, and
raised CommitConflictError "table 'ns.t' was changed by version 2" for a transaction
that was committed as version 2 (a changing that commutes could even land twice). A
change staged by another thread while the commit was past building its root returned
normally and was silently left out of the version the commit acknowledged.

Now the writes and the commit of one transaction take turns: a second commit waits
for the first and is told the truth (TransactionClosedError "committed as version N"),
a change staged (or saved, in a distributed transaction) meanwhile is refused the
same way instead of being dropped.
"""

from __future__ import annotations

import contextlib
import threading

import pytest

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError

NO_FSYNC = {"fsync": False}


def _outcome(run) -> tuple[str, object]:
    try:
        return "ok", run()
    except Exception as exc:  # reported to the test
        return "error", exc


def test_two_threads_committing_one_transaction_land_it_once(tmp_path, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    base = lake.latest_version()
    txn = lake.transaction()
    txn.create_table("ns", "t")
    both_at_the_create = threading.Barrier(2, timeout=1)
    real_create = transaction_module.create_root

    def create_when_both_are_here(*args, **kwargs):
        # the old code: both threads get here and race for the same root; now the
        # other thread waits for this commit instead (the barrier times out)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_at_the_create.wait()
        return real_create(*args, **kwargs)

    monkeypatch.setattr(transaction_module, "create_root", create_when_both_are_here)
    outcomes: list[tuple[str, object]] = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(_outcome(txn.commit))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(outcomes) == 2, outcomes
    landed = [value for kind, value in outcomes if kind == "ok"]
    refused = [value for kind, value in outcomes if kind == "error"]
    assert landed == [base + 1], outcomes
    assert len(refused) == 1 and isinstance(refused[0], TransactionClosedError), outcomes
    assert f"committed as version {base + 1}" in str(refused[0])
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == base + 1
    assert fresh.list_tables("ns") == ["t"]


@pytest.mark.parametrize("kind", ["transaction", "distributed"])
def test_a_change_staged_during_a_commit_is_refused_not_dropped(tmp_path, monkeypatch, kind):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    txn = lake.transaction() if kind == "transaction" else lake.begin_distributed()
    txn.create_table("ns", "first")
    creating, go_on = threading.Event(), threading.Event()
    real_create = transaction_module.create_root

    def create_after_a_pause(*args, **kwargs):
        creating.set()  # the root is built: what it holds is decided
        go_on.wait(10)
        return real_create(*args, **kwargs)

    monkeypatch.setattr(transaction_module, "create_root", create_after_a_pause)
    committed: list[tuple[str, object]] = []
    committer = threading.Thread(target=lambda: committed.append(_outcome(txn.commit)))
    committer.start()
    assert creating.wait(10)
    staged: list[tuple[str, object]] = []

    def stage() -> None:
        txn.create_table("ns", "second")
        if kind == "distributed":
            txn.save()  # for another process to commit

    stager = threading.Thread(target=lambda: staged.append(_outcome(stage)))
    stager.start()
    stager.join(0.5)  # the old code: returns at once, while the commit is paused
    go_on.set()
    committer.join(30)
    stager.join(30)
    (kind, version), (staged_kind, staged_value) = committed[0], staged[0]
    assert kind == "ok", committed
    tables = Lakehouse.open(lake.url).at(version).list_tables("ns")
    if staged_kind == "ok":  # acknowledged: it must be in what the commit acknowledged
        assert tables == ["first", "second"], f"create_table returned but {tables} landed"
    else:
        assert isinstance(staged_value, TransactionClosedError), staged
        assert f"committed as version {version}" in str(staged_value)
        assert tables == ["first"]
    with pytest.raises(TransactionClosedError, match=f"committed as version {version}"):
        txn.commit()
