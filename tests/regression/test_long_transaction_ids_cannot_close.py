"""fa27bbf made a commit or abort first create a closing claim, the transaction file of
id `<id>~closing`. A transaction whose id was valid but too long to take that suffix
(here 200 bytes, the maximum) could then be neither committed nor aborted: a transaction
saved by 30f7176 under such an id was stuck with its work (InvalidNameError for a name
it never chose), and new ids of 193-200 bytes were refused. The claim of such an id is
now named by the id's SHA-256, so every valid id begins, commits and aborts."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError, TransactionNotFoundError
from trinityfs.lifecycle import dtxn

NO_FSYNC = {"fsync": False}
LONG = "x" * 200


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    return lake


def test_a_long_id_commits_once(lake):
    txn = lake.begin_distributed(txn_id=LONG)
    txn.create_table("ns", "t")
    txn.save()
    other = Lakehouse.open(lake.url, storage_options=NO_FSYNC).load_distributed(LONG)
    version = other.commit()
    assert lake.list_tables("ns") == ["t"] and lake.latest_version() == version
    with pytest.raises((TransactionClosedError, TransactionNotFoundError)):  # as a short id
        txn.commit()


def test_a_long_id_aborts(lake):
    txn = lake.begin_distributed(txn_id=LONG[:-1] + "y")
    txn.create_table("ns", "t")
    txn.save()
    txn.abort()
    assert lake.list_tables("ns") == []


def test_claims_of_long_ids_are_distinct_and_short_ids_keep_their_name():
    a, b = dtxn.claim_location("a" * 200), dtxn.claim_location("a" * 199 + "b")
    assert a != b
    assert "txn-t1~closing" in dtxn.claim_location("t1")
