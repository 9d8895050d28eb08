"""Child processes of test_crash_dtxn.py: one step of a distributed transaction, with
SIGKILL at one counted storage operation (tests/stress/faults.py)."""

from __future__ import annotations

import os

from trinityfs import Lakehouse
from trinityfs.storage import Storage

TXN_ID = "crashing"
STORAGE_OPTIONS = {"fsync": False}


def step(lake: Lakehouse, phase: str) -> str:
    """The step a crash run cuts short: "save" (a second change), "commit", "abort"."""
    txn = lake.load_distributed(TXN_ID)
    if phase == "save":
        txn.create_table("ns", "staged2", {"properties": {"k": "2"}})
        txn.save()
        return "saved"
    if phase == "commit":
        return f"committed {txn.commit()}"
    txn.abort()
    return "aborted"


def crash_child(url: str, phase: str, kind: str, at: int, ack_path: str) -> None:
    """Run `step(phase)` with fault `kind` at counted operation `at`; the outcome is
    appended to `ack_path` when the step returned."""
    from faults import Plan, inject

    storage = Storage(url, STORAGE_OPTIONS)
    inject(storage, Plan(kind=kind, at=at))
    done = step(Lakehouse(storage), phase)
    fd = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, done.encode() + b"\n")
