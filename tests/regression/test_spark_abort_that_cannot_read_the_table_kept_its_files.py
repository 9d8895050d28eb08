"""A trinitylake write whose job failed kept its data files when abort() could not read
the table (fronts5 left it: 9359f75 made abort keep files whenever it cannot tell whether
the job's snapshot landed). A job staged in a catalog transaction that was closed
meanwhile is the plain case: the table cannot be read through the closed transaction, so
every file of the job stayed as an orphan for `reclaim_files`.

Now the writer uses what it knows without reading the table: a task that failed (its
message is None) means Spark never called commit(), so no snapshot of the job exists;
and a commit() that raised before it committed anything removes the job's files itself.
Files of a commit that may have landed still stay (the ambiguous case of 9359f75).
Driven as Spark drives the source (tests/regression/spark_helpers.py)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake
from tests.regression.spark_helpers import read_all, source
from trinityfs import Lakehouse

SCHEMA = T.StructType([T.StructField("id", T.LongType())])
BATCH = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64())})


def _local(path: str) -> str:
    return path.removeprefix("file://")


def _staged_job(root: str):
    """A writer of ns.t staged in an open catalog transaction, and one task's message."""
    lake = Lakehouse.open(root)
    dtxn = lake.begin_distributed()
    dtxn.save()
    writer = source(root=root, path="ns.t", transaction=dtxn.id).writer(SCHEMA, False)
    writer = pickle.loads(pickle.dumps(writer))
    message = pickle.loads(pickle.dumps(writer.write(iter([BATCH]))))
    assert message.paths and all(os.path.exists(_local(p)) for p in message.paths)
    return lake, dtxn.id, writer, message


@pytest.mark.parametrize("existing", [False, True])
def test_abort_after_a_failed_task_removes_files_it_cannot_check(tmp_path: Path, existing):
    root = make_lake(tmp_path / "lake")
    if existing:
        first = pickle.loads(pickle.dumps(source(root=root, path="ns.t").writer(SCHEMA, False)))
        first.commit([first.write(iter([BATCH]))])
    lake, txn_id, writer, message = _staged_job(root)
    lake.load_distributed(txn_id).abort()  # the user's block failed meanwhile
    pickle.loads(pickle.dumps(writer)).abort([message, None])  # task 2 failed
    assert not [p for p in message.paths if os.path.exists(_local(p))]
    if existing:  # the table is as before the job
        assert sorted(read_all(root=root, path="ns.t")["id"].to_pylist()) == [1, 2, 3]


def test_commit_into_a_closed_transaction_removes_its_files(tmp_path: Path):
    root = make_lake(tmp_path / "lake")
    lake, txn_id, writer, message = _staged_job(root)
    lake.load_distributed(txn_id).abort()
    with pytest.raises(Exception, match="transaction"):
        pickle.loads(pickle.dumps(writer)).commit([message])
    pickle.loads(pickle.dumps(writer)).abort([message])  # what Spark does next
    assert not [p for p in message.paths if os.path.exists(_local(p))]
    assert Lakehouse.open(root).snapshot().object_location("table", "ns", "t") is None
