"""One distributed transaction committed by two processes at the same time.

Both passed the check that the transaction file is still there and raced for the
next root. The loser was told CommitConflictError naming the raw padded key ("key
'C===ns      ...  a'"), never that the transaction it committed had landed; and when
its change commuted with the winner's (a property set to the value it already had),
it replayed and landed the same transaction a second time.

Now the root a distributed transaction commits names it (a `trinityfs_transaction`
system row, which readers ignore), and a commit that lost a race looks for it first:
TransactionClosedError "already committed as version N", nothing lands twice. A real
conflict of a loaded transaction names the object ("table 'ns.a'").

Since the closing claim (docs/FORMAT-CHOICES.md "Closing a distributed transaction"),
two commits of one transaction no longer both get past their checks: the second finds
the claim and is told TransactionClosedError ("being (or was) committed or aborted"), or
"already committed as version N" / TransactionNotFoundError when the first finished.
The rebase check above stays for roots written without a claim.
"""

from __future__ import annotations

import multiprocessing
import threading

import pytest
from dtxn_race_workers import commit_at_the_same_time

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import CommitConflictError, TransactionClosedError

NO_FSYNC = {"fsync": False}


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns", {"x": "1"})
    return lake


@pytest.mark.parametrize("updates", [{"x": "2"}, {"y": "2"}], ids=["same name", "new"])
def test_a_loaded_copy_committed_meanwhile_is_not_landed_again(tmp_path, monkeypatch, updates):
    lake = _lake(tmp_path)
    mine = lake.begin_distributed(txn_id="t1")
    mine.set_namespace_properties("ns", updates=updates)
    mine.save()
    theirs = Lakehouse.open(lake.url, storage_options=NO_FSYNC).load_distributed("t1")
    real_create = transaction_module.create_root
    landed: list[int] = []
    started: list[bool] = []

    def the_other_commits_first(*args, **kwargs):
        if not started:  # after our checks, before our root: the copy commits
            started.append(True)
            other = threading.Thread(target=commit_and_record)
            other.start()
            other.join(30)
        return real_create(*args, **kwargs)

    monkeypatch.setattr(transaction_module, "create_root", the_other_commits_first)
    refused: list[Exception] = []

    def commit_and_record() -> None:
        try:
            landed.append(theirs.commit())
        except Exception as exc:  # recorded, not raised: the thread reports nothing itself
            refused.append(exc)

    assert mine.commit() == 2
    assert landed == [] and len(refused) == 1, refused
    assert isinstance(refused[0], TransactionClosedError)
    assert "being (or was) committed" in str(refused[0])
    fresh = Lakehouse.open(lake.url)
    assert [v.version for v in fresh.versions()] == [0, 1, 2]
    assert dict(fresh.describe_namespace("ns").properties) == {"x": "1", **updates}
    with pytest.raises(TransactionClosedError, match="committed as version 2"):
        mine.commit()


def test_two_processes_committing_one_transaction_land_it_once(tmp_path):
    lake = _lake(tmp_path)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    meeting = str(tmp_path / "meeting")
    procs = [
        ctx.Process(target=commit_at_the_same_time, args=(lake.url, "t1", meeting, me, out))
        for me in (0, 1)
    ]
    for proc in procs:
        proc.start()
    outcomes = [out.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(30)
    landed = [value for kind, value in outcomes if kind == "ok"]
    assert len(landed) == 1, outcomes
    (told,) = [(kind, value) for kind, value in outcomes if kind != "ok"]
    assert told[0] == "TransactionClosedError", outcomes
    assert told[1].startswith(
        "distributed transaction t1 is being (or was) committed or aborted by another process"
    ), outcomes
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == landed[0] == 2
    assert fresh.list_tables("ns") == ["a"]


def test_a_conflict_of_a_loaded_transaction_names_the_object(tmp_path):
    lake = _lake(tmp_path)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    loaded = Lakehouse.open(lake.url, storage_options=NO_FSYNC).load_distributed("t1")
    lake.create_table("ns", "a")  # another commit takes the name
    with pytest.raises(CommitConflictError) as conflict:
        loaded.commit()
    assert "table 'ns.a'" in str(conflict.value)
    assert "C===" not in str(conflict.value)
