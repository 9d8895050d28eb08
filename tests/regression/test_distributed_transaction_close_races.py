"""Closing a distributed transaction raced other processes (no compare-and-swap).

(1) `abort()` while another process's commit was between its checks and its root:
abort found the transaction file, removed it and returned normally; then the commit
landed. An acknowledged abort of a transaction that was committed.
(2) `save()` in another process, paused between its "is the file still there" check
and its write, while the transaction was aborted: the write brought the removed file
back, and the aborted transaction could be loaded and committed.
(3) A commit that landed late and was undone (version N+1 restores N-1), the
transaction file kept: a later commit of the transaction was told "already committed
as version N", although nothing of it stayed committed.

Now a commit or an abort first creates the transaction's closing claim (create-if-
absent, docs/FORMAT-CHOICES.md "Closing a distributed transaction"): the abort that
finds a commit's claim is told TransactionClosedError "being committed"; a save or load
that finds a claim is refused (a save that wrote meanwhile removes what it wrote); and
the root an undo writes names the version it undid, which then does not count as the
transaction's commit (the later commit then meets an honest conflict).
"""

from __future__ import annotations

import multiprocessing
import os

import pytest
from dtxn_close_workers import commit_paused_before_the_root, save_paused_before_the_write

from trinityfs import Lakehouse
from trinityfs.errors import CommitConflictError, TransactionClosedError, TransactionNotFoundError
from trinityfs.format.paths import transaction_location
from trinityfs.txn.publish import undo

NO_FSYNC = {"fsync": False}


def _lake(where) -> Lakehouse:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")
    return lake


def _start(target, *args):
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    return proc, out


def _wait(path: str) -> None:
    import time

    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"the worker never reached {path}"
        time.sleep(0.01)


def test_abort_while_another_process_commits_is_not_acknowledged(tmp_path, where) -> None:
    lake = _lake(where)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    signals = str(tmp_path / "sig")
    proc, out = _start(commit_paused_before_the_root, lake.url, where[1], "t1", signals)
    try:
        _wait(f"{signals}.arrived")
        try:
            txn.abort()
            aborted = True
        except TransactionClosedError as exc:
            assert "being committed" in str(exc)
            aborted = False
    finally:
        open(f"{signals}.go", "w").close()
        kind, value = out.get(timeout=120)
        proc.join(30)
    fresh = Lakehouse.open(lake.url, storage_options=where[1])
    committed = "a" in fresh.list_tables("ns")
    assert not (aborted and committed), "abort returned normally, and the commit landed"
    assert (kind == "ok") == committed, (kind, value)


def test_save_racing_an_abort_does_not_bring_the_transaction_back(tmp_path, where) -> None:
    lake = _lake(where)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    signals = str(tmp_path / "sig")
    proc, out = _start(save_paused_before_the_write, lake.url, where[1], "t1", signals)
    try:
        _wait(f"{signals}.arrived")
        txn.abort()
    finally:
        open(f"{signals}.go", "w").close()
        kind, value = out.get(timeout=120)
        proc.join(30)
    assert kind != "ok", f"a save after the abort reported success: {value}"
    fresh = Lakehouse.open(lake.url, storage_options=where[1])
    assert not fresh.storage.exists(transaction_location("t1"))
    with pytest.raises((TransactionNotFoundError, TransactionClosedError)):
        fresh.load_distributed("t1").commit()
    assert fresh.list_tables("ns") == []


def test_a_commit_that_was_undone_is_not_reported_committed(where) -> None:
    lake = _lake(where)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    location = transaction_location("t1")
    saved = lake.storage.read(location)
    landed = txn.commit()
    engine = lake.engine
    # what a late landing whose files were swept leaves: the version undone by the
    # next one, the transaction file kept and no claim held
    assert undo(engine, landed, engine.snapshot(landed - 1))
    lake.storage.write(location, saved)
    lake.storage.delete(transaction_location("t1~closing"))
    again = Lakehouse.open(lake.url, storage_options=where[1]).load_distributed("t1")
    # versions 2 and 3 changed what it writes (a conflict), but none is its commit
    with pytest.raises(CommitConflictError, match="changed by version"):
        again.commit()
    assert Lakehouse.open(lake.url, storage_options=where[1]).list_tables("ns") == []
