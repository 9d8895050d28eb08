"""Regression: a distributed transaction's `abort()` closed the local handle and dropped
its pending changes before it learnt that it could not abort: another process held the
closing claim (committing it), or the claim could not be written at all. The abort
raised, yet a later `commit()` on the handle said "the transaction is already committed
or aborted" (neither had happened), and its unsaved changes were gone. Now the handle
is closed only once the abort took effect: refused or failed, it keeps its changes, and
a later commit says what is really going on (the claim) or commits.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import StorageError, TransactionClosedError
from trinityfs.lifecycle.dtxn import claim_location, transaction_location


def _begun(where) -> tuple[Lakehouse, object]:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "saved")
    txn.save()
    txn.create_table("ns", "unsaved")  # only in this handle
    return lake, txn


def test_an_abort_refused_by_a_committer_keeps_the_handle(where) -> None:
    lake, txn = _begun(where)
    elsewhere = Lakehouse.open(lake.url, storage_options=where[1]).load_distributed("t1")
    assert elsewhere.txn._take_claim()  # another process is committing it, paused
    with pytest.raises(TransactionClosedError, match="being committed by another process"):
        txn.abort()
    with pytest.raises(TransactionClosedError) as refused:
        txn.commit()  # the claim is still held: said so, not "already ... aborted"
    assert "another process" in str(refused.value), refused.value
    assert "already committed or aborted" not in str(refused.value)
    elsewhere.txn._release_claim()  # that commit failed before its root: released
    version = txn.commit()
    assert sorted(lake.at(version=version).list_tables("ns")) == ["saved", "unsaved"]


def test_an_abort_that_failed_keeps_the_handle(where) -> None:
    lake, txn = _begun(where)
    backend = lake.engine.storage.backend
    failing = {"create_if_absent", "create_if_absent_after", "create_noting_identity"}
    real = {name: getattr(backend, name) for name in failing if hasattr(backend, name)}

    def broken(*args, **kwargs):
        raise PermissionError(13, "Permission denied (injected)")

    for name in real:
        setattr(backend, name, broken)
    with pytest.raises(StorageError):
        txn.abort()  # the claim could not be created: nothing was aborted
    for name, method in real.items():
        setattr(backend, name, method)
    assert lake.storage.exists(transaction_location("t1"))  # the stored state is untouched
    assert not lake.storage.exists(claim_location("t1"))
    version = txn.commit()
    assert sorted(lake.at(version=version).list_tables("ns")) == ["saved", "unsaved"]


def test_an_abort_after_a_commit_elsewhere_says_so_on_every_later_call(where) -> None:
    lake, txn = _begun(where)
    elsewhere = Lakehouse.open(lake.url, storage_options=where[1]).load_distributed("t1")
    landed = elsewhere.commit()
    with pytest.raises(TransactionClosedError, match=f"committed as version {landed}"):
        txn.abort()
    with pytest.raises(TransactionClosedError, match=f"committed as version {landed}"):
        txn.commit()
    assert lake.list_tables("ns") == ["saved"]
