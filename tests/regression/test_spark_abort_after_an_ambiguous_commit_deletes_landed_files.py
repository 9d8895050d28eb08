"""When the driver's commit of a trinitylake write raised with its outcome unknown
(AmbiguousWriteError: the catalog root was written but could not be read back), Spark
called the writer's abort(), as it does after any failed commit, and abort removed every
data file of the job. The commit had landed: the table's current snapshot named the
removed files and every read of the table failed with FileNotFoundError.

Now abort first looks for the job's snapshot (its job id in the snapshot summary): when
it landed, or when the table cannot be read to tell, no file is removed (an unreferenced
file harms no reader; `reclaim_files` removes it later). Driven as Spark drives the source
(tests/regression/spark_helpers.py); the storage answers the root write ambiguously."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake
from tests.regression.spark_helpers import read_all, source
from trinityfs.errors import AmbiguousWriteError, StorageError
from trinityfs.format.paths import parse_root_node_file
from trinityfs.storage import Storage

SCHEMA = T.StructType([T.StructField("id", T.LongType())])
BATCH = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64())})


def land_ambiguously(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next root written lands, but answers AmbiguousWriteError, and reading it back
    fails until the patch is undone."""
    real_create, real_read = Storage.create_if_absent, Storage.read
    state: dict = {"armed": True, "root": None}

    def create(self, loc, data, **kwargs):
        if state["armed"] and parse_root_node_file(loc) is not None:
            state["armed"], state["root"] = False, loc
            real_create(self, loc, data, **kwargs)
            raise AmbiguousWriteError(f"injected: outcome of {loc} unknown")
        return real_create(self, loc, data, **kwargs)

    def read(self, loc):
        if loc == state["root"]:
            raise StorageError(f"injected: read of {loc} failed")
        return real_read(self, loc)

    monkeypatch.setattr(Storage, "create_if_absent", create)
    monkeypatch.setattr(Storage, "read", read)


@pytest.mark.parametrize("existing", [False, True])
def test_abort_after_an_ambiguous_commit_keeps_the_files_it_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    root = make_lake(tmp_path / "lake")
    if existing:
        first = pickle.loads(pickle.dumps(source(root=root, path="ns.t").writer(SCHEMA, False)))
        first.commit([first.write(iter([BATCH]))])
    writer = pickle.loads(pickle.dumps(source(root=root, path="ns.t").writer(SCHEMA, False)))
    message = pickle.loads(pickle.dumps(writer.write(iter([BATCH]))))
    land_ambiguously(monkeypatch)
    with pytest.raises(AmbiguousWriteError):
        pickle.loads(pickle.dumps(writer)).commit([message])
    monkeypatch.undo()
    pickle.loads(pickle.dumps(writer)).abort([message])  # what Spark does next
    expected = [1, 2, 3] * (2 if existing else 1)
    assert sorted(read_all(root=root, path="ns.t")["id"].to_pylist()) == sorted(expected)
