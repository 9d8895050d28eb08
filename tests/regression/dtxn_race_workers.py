"""Process workers of tests/regression/test_distributed_transaction_committed_twice.py
(importable by name from spawned processes)."""

from __future__ import annotations

import os
import time

from trinityfs import Lakehouse
from trinityfs.txn.roots import RootStore

NO_FSYNC = {"fsync": False}


def commit_at_the_same_time(url: str, txn_id: str, meeting: str, me: int, out) -> None:
    """Load `txn_id` and commit it; right before creating its root, wait (up to 5 s)
    until the other worker got there too, so both race for the same root. Reports
    ("ok", version) or (error type name, message)."""
    real_create = RootStore.create

    def create_when_both_are_here(self, version, data, *flush):
        open(f"{meeting}.{me}", "w").close()
        deadline = time.monotonic() + 5
        while not os.path.exists(f"{meeting}.{1 - me}") and time.monotonic() < deadline:
            time.sleep(0.005)
        return real_create(self, version, data, *flush)

    RootStore.create = create_when_both_are_here  # this process only
    try:
        txn = Lakehouse.open(url, storage_options=NO_FSYNC).load_distributed(txn_id)
        out.put(("ok", txn.commit()))
    except Exception as exc:  # reported to the test
        out.put((type(exc).__name__, str(exc)))
