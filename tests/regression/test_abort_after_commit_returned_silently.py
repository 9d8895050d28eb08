"""`abort()` after a successful `commit()` on the same handle returned normally, for plain
and distributed transactions: an acknowledged abort of a transaction that stays
committed. Now it raises TransactionClosedError naming the version; aborting twice, or
after a commit that changed nothing (nothing was committed), still returns normally.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError

NO_FSYNC = {"fsync": False}


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    return lake


def test_abort_after_commit_of_a_transaction(lake) -> None:
    txn = lake.transaction()
    txn.create_table("ns", "a")
    assert txn.commit() == 2
    with pytest.raises(TransactionClosedError, match="committed as version 2"):
        txn.abort()
    assert lake.list_tables("ns") == ["a"]
    empty = lake.transaction()
    assert empty.commit() == 2
    empty.abort()  # nothing was committed: true
    aborted = lake.transaction()
    aborted.create_table("ns", "b")
    aborted.abort()
    aborted.abort()
    assert lake.list_tables("ns") == ["a"]


def test_abort_after_commit_of_a_distributed_transaction(lake) -> None:
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    assert txn.commit() == 2
    with pytest.raises(TransactionClosedError, match="committed as version 2"):
        txn.abort()
    assert lake.list_tables("ns") == ["a"]
