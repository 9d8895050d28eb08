"""Regression: a process killed (SIGKILL) right after its distributed transaction's root
landed, before it removed the transaction file, left the file and the closing claim.
Loading the transaction then said only "is being (or was) committed or aborted by
another process", for ever (the claim is never taken over, and the file is kept until
the transaction expires), although a version names the transaction: whoever retried
after the crash could not learn through the API that it had committed, nor as which
version. Found by tests/stress/test_crash_dtxn.py (SIGKILL at every storage operation
of a distributed commit). Now `load_distributed` says "committed as version N".

The kill is real: a child process commits with tests/stress/faults.py's SIGKILL before
its first delete (the removal of the transaction file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import trinityfs
from trinityfs import Lakehouse
from trinityfs.errors import TransactionClosedError
from trinityfs.lifecycle.dtxn import claim_location, transaction_location

CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[3])
    from faults import KILL_BEFORE, Plan, inject
    from trinityfs import Lakehouse
    from trinityfs.storage import Storage
    storage = Storage(sys.argv[1], json.loads(sys.argv[2]))
    if storage.backend.needs_probe:
        storage.probe_conditional_writes()  # its delete is not the one to die at
    inject(storage, Plan(kind=KILL_BEFORE, at=1, ops=frozenset({"delete"})))
    Lakehouse(storage).load_distributed("t1").commit()
    print("not killed")
    """
)


def test_loading_a_transaction_whose_committer_was_killed_names_its_version(where) -> None:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "staged", {"properties": {"k": "1"}})
    txn.save()
    stress = Path(__file__).parent.parent / "stress"
    env = {**os.environ, "PYTHONPATH": str(Path(trinityfs.__file__).parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, json.dumps(options), str(stress)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == -9, done.stdout + done.stderr
    fresh = Lakehouse.open(url, storage_options=options)
    version = fresh.latest_version()
    assert fresh.describe_table("ns", "staged").properties == {"k": "1"}
    # what the crash left: the transaction file and the closing claim
    assert fresh.storage.exists(transaction_location("t1"))
    assert fresh.storage.exists(claim_location("t1"))
    with pytest.raises(TransactionClosedError, match=f"committed as version {version}\\b"):
        fresh.load_distributed("t1")
    assert fresh.create_table("ns", "after") == version + 1  # the next writer proceeds
