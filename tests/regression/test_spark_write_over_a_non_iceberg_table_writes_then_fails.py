"""Regression: a trinitylake write to a name held by a TrinityLake table of another format
(DELTA, ...) was planned as a create (the driver's `load_table` raised
NoSuchIcebergTableError, a NoSuchTableError, read as "no table"), every task wrote its
data files, and the commit then failed with a bare pyiceberg NoSuchIcebergTableError
(the create lost to the existing name, and reloading it raised) that left the files
behind. A read of the same table says at once that it is not an Iceberg table.

Now the plan refuses it as a read does (ObjectNotFoundError "writing ns.t: ns.t is not
an Iceberg table ...") before any task runs, and a non-Iceberg table that takes the
name while the job runs makes the commit a TrinityLakeWriteConflict that removes the
job's files. Found 2026-11-25 (helper adversary3); fails on 187bd6c.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake
from tests.regression.spark_helpers import read_all, source
from trinityfs import Lakehouse
from trinityfs.errors import ObjectNotFoundError
from trinityfs.spark import TrinityLakeWriteConflict

SPARK_SCHEMA = T.StructType([T.StructField("id", T.LongType(), True)])
BATCH = pa.RecordBatch.from_pydict({"id": pa.array([1, 2, 3], pa.int64())})


def _files(root: str) -> list[Path]:
    return sorted((Path(root) / "warehouse").rglob("*.parquet"))


@pytest.mark.parametrize("overwrite", [False, True])
def test_write_to_a_delta_table_is_refused_before_any_task(tmp_path, overwrite):
    root = make_lake(tmp_path / "lake")
    Lakehouse.open(root).create_table("ns", "t", {"table_format": "DELTA"})
    with pytest.raises(ObjectNotFoundError, match=r"writing ns\.t: .*not an Iceberg table"):
        source(root=root, path="ns.t").writer(SPARK_SCHEMA, overwrite)
    with pytest.raises(ObjectNotFoundError, match=r"reading ns\.t: .*not an Iceberg table"):
        read_all(root=root, path="ns.t")
    assert _files(root) == []
    assert Lakehouse.open(root).describe_table("ns", "t").table_format == "DELTA"


def test_a_delta_table_taking_the_name_mid_job_is_a_conflict_with_files_removed(tmp_path):
    root = make_lake(tmp_path / "lake")
    writer = pickle.loads(pickle.dumps(source(root=root, path="ns.t").writer(SPARK_SCHEMA, False)))
    message = pickle.loads(pickle.dumps(writer.write(iter([BATCH]))))
    assert _files(root)
    Lakehouse.open(root).create_table("ns", "t", {"table_format": "DELTA"})
    with pytest.raises(TrinityLakeWriteConflict, match="not committed"):
        writer.commit([message])
    assert _files(root) == []
    assert Lakehouse.open(root).describe_table("ns", "t").table_format == "DELTA"
