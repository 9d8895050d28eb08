"""`abort()` of a distributed transaction another process had committed returned normally.

Process A begins and saves; process B loads and commits it (version 2, and removes the
stored state); A's `abort()` ("forget the transaction everywhere") said nothing,
although the transaction stays committed. Now A is told TransactionClosedError "was
committed as version 2 by another process; it cannot be aborted" (the committed root
names its transaction). Aborted elsewhere, a second abort stays a no-op.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError

NO_FSYNC = {"fsync": False}


def _saved(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    return lake, txn


def test_abort_of_a_transaction_committed_elsewhere_says_so(tmp_path):
    lake, mine = _saved(tmp_path)
    assert Lakehouse.open(lake.url).load_distributed("t1").commit() == 2
    with pytest.raises(TransactionClosedError, match="committed as version 2 by another"):
        mine.abort()
    assert Lakehouse.open(lake.url).list_tables("ns") == ["a"]


def test_abort_of_a_transaction_aborted_elsewhere_is_a_no_op(tmp_path):
    lake, mine = _saved(tmp_path)
    Lakehouse.open(lake.url).load_distributed("t1").abort()
    mine.abort()
    assert Lakehouse.open(lake.url).list_tables("ns") == []
