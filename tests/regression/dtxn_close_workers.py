"""Process workers of tests/regression/test_distributed_transaction_close_races.py
(importable by name from spawned processes)."""

from __future__ import annotations

import os
import time

from trinityfs import Lakehouse
from trinityfs.storage.core import Storage
from trinityfs.txn.roots import RootStore


def _wait_for(path: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.005)


def commit_paused_before_the_root(url: str, options: dict, txn_id: str, signals: str, out) -> None:
    """Load `txn_id` and commit it; right before creating the root, say "arrived" and
    wait for "go". Reports ("ok", version) or (error type name, message)."""
    real_create = RootStore.create

    def paused(self, version, data, *flush):
        open(f"{signals}.arrived", "w").close()
        _wait_for(f"{signals}.go")
        return real_create(self, version, data, *flush)

    RootStore.create = paused  # this process only
    try:
        txn = Lakehouse.open(url, storage_options=options).load_distributed(txn_id)
        out.put(("ok", txn.commit()))
    except Exception as exc:  # reported to the test
        out.put((type(exc).__name__, str(exc)))


def save_paused_before_the_write(url: str, options: dict, txn_id: str, signals: str, out) -> None:
    """Load `txn_id`, add a table and save; right before overwriting the transaction
    file, say "arrived" and wait for "go". Reports ("ok", None) or (error, message)."""
    real_write = Storage.write

    def paused(self, loc, data, **kwargs):
        if f"txn-{txn_id}.binpb" in loc:
            open(f"{signals}.arrived", "w").close()
            _wait_for(f"{signals}.go")
        return real_write(self, loc, data, **kwargs)

    Storage.write = paused  # this process only
    try:
        txn = Lakehouse.open(url, storage_options=options).load_distributed(txn_id)
        txn.create_table("ns", "from_the_saver")
        txn.save()
        out.put(("ok", None))
    except Exception as exc:  # reported to the test
        out.put((type(exc).__name__, str(exc)))


def commit_dying_before_the_root(url: str, options: dict, txn_id: str, out) -> None:
    """Load `txn_id` and commit it, and die (os._exit) right before creating the root:
    the closing claim stays, the commit never lands."""

    def die(self, version, data, *flush):
        out.put(("died", version))
        time.sleep(0.5)  # the queue's feeder thread sends the message
        os._exit(3)

    RootStore.create = die  # this process only
    txn = Lakehouse.open(url, storage_options=options).load_distributed(txn_id)
    txn.commit()
