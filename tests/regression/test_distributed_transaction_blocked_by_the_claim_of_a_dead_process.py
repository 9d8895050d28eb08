"""A process that died holding the closing claim of a distributed commit that never
landed blocked the transaction until expiration removed the claim (after its grace
period: by default three days), and every commit, abort and load said only "being (or
was) committed or aborted by another process", naming neither the claim nor what to do.
Now, once the claim is older than any commit may take (the commit window plus a minute
for clocks), the error names the claim file, its age, and how to clear it (remove it
once no process can still be closing the transaction); removed, the transaction
commits. A claim is never taken over by itself: a committer paused between its last
check and the create of its root may still land (docs/FORMAT-CHOICES.md "Closing a
distributed transaction").
"""

from __future__ import annotations

import multiprocessing

import pytest
from dtxn_close_workers import commit_dying_before_the_root

import trinityfs.lifecycle.dtxn_close as dtxn_close
from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError
from trinityfs.lifecycle.dtxn import claim_location
from trinityfs.lifecycle.dtxn_files import is_claim


def _lake(where) -> Lakehouse:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")
    return lake


def test_the_claim_of_a_dead_committer_is_named_and_can_be_cleared(where, monkeypatch) -> None:
    lake = _lake(where)
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=commit_dying_before_the_root, args=(lake.url, where[1], "t1", out))
    proc.start()
    assert out.get(timeout=120) == ("died", 2)
    proc.join(30)
    assert proc.exitcode == 3
    claim = claim_location("t1")
    assert lake.storage.exists(claim) and lake.latest_version() == 1
    with pytest.raises(TransactionClosedError) as fresh:
        txn.commit()  # a claim this young may belong to a commit in progress
    assert "remove" not in str(fresh.value)
    real_now = dtxn_close.now_millis
    monkeypatch.setattr(dtxn_close, "now_millis", lambda: real_now() + 3_600_000)
    url = lake.storage.url_of(claim)
    for act, what in ((txn.commit, "committed"), (txn.abort, "aborted")):
        with pytest.raises(TransactionClosedError) as stale:
            act()
        message = str(stale.value)
        assert url in message and "s ago" in message, message
        assert f"remove that file and it can be {what} again" in message, message
    with pytest.raises(TransactionClosedError, match="it can be loaded again"):
        Lakehouse.open(lake.url, storage_options=where[1]).load_distributed("t1")
    lake.storage.delete(claim)  # what the message says, once the committer is known dead
    loaded = Lakehouse.open(lake.url, storage_options=where[1]).load_distributed("t1")
    assert loaded.commit() == 2
    assert Lakehouse.open(lake.url, storage_options=where[1]).list_tables("ns") == ["a"]


def test_claims_are_told_from_transactions() -> None:
    assert is_claim("t1~closing") and not is_claim("t1")
