"""A distributed transaction id used again right after its transaction was committed or
aborted: the closing claim of the first one (kept until expiration removes it, after the
grace period) made the new transaction's commit and abort answer "being committed by
another process", and its load refuse, for minutes. (Came with the claim, fa27bbf; the
session start 30f7176 had no claim.) Now `begin` with an explicit id removes a stale
claim once it created the transaction file (the earlier transaction's file is gone, so
whoever closed it is done).
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse

NO_FSYNC = {"fsync": False}


@pytest.mark.parametrize("close", ["commit", "abort"])
def test_an_id_used_again_commits(tmp_path, close) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    first = lake.begin_distributed(txn_id="t1")
    first.create_table("ns", "a")
    getattr(first, close)()
    again = lake.begin_distributed(txn_id="t1")
    again.create_table("ns", "b")
    again.save()
    loaded = Lakehouse.open(lake.url, storage_options=NO_FSYNC).load_distributed("t1")
    version = loaded.commit()
    assert "b" in lake.at(version).list_tables("ns")
