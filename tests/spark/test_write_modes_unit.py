"""Overwrite modes and partitioning of the trinitylake writer, driven without a JVM."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType
from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake
from tests.regression.spark_helpers import read_all, write
from trinityfs.errors import InvalidArgumentError
from trinityfs.iceberg import TrinityCatalog

SPARK = T.StructType([T.StructField("id", T.LongType()), T.StructField("cat", T.StringType())])


def batch(rows: list[tuple[int, str]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"id": pa.array([r[0] for r in rows], pa.int64()), "cat": [r[1] for r in rows]}
    )


@pytest.fixture
def root(tmp_path: Path) -> str:
    root = make_lake(tmp_path / "lake")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "cat", StringType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
    TrinityCatalog("l", root=root).create_table("ns.t", schema, partition_spec=spec)
    write(batch([(i, "abc"[i % 3]) for i in range(9)]), SPARK, root=root, path="ns.t")
    return root


def ids(root: str) -> list[int]:
    return sorted(read_all(root=root, path="ns.t")["id"].to_pylist())


def test_overwrite_of_a_partitioned_table_must_say_static_or_dynamic(root):
    with pytest.raises(InvalidArgumentError, match="partitionOverwriteMode"):
        write(batch([(100, "a")]), SPARK, overwrite=True, root=root, path="ns.t")
    assert ids(root) == list(range(9))


def test_dynamic_replaces_only_the_partitions_written(root):
    opts = {"partitionOverwriteMode": "dynamic"}
    write(batch([(100, "a")]), SPARK, overwrite=True, root=root, path="ns.t", **opts)
    assert ids(root) == [1, 2, 4, 5, 7, 8, 100]


def test_overwrite_filter_replaces_matching_rows_and_refuses_others(root):
    opts = {"overwrite-filter": "id >= 4 and id < 8"}
    write(batch([(5, "b")]), SPARK, overwrite=True, root=root, path="ns.t", **opts)
    assert ids(root) == [0, 1, 2, 3, 5, 8]
    with pytest.raises(InvalidArgumentError, match="do not match"):
        write(batch([(100, "a")]), SPARK, overwrite=True, root=root, path="ns.t", **opts)
    with pytest.raises(InvalidArgumentError, match="append"):
        write(batch([(5, "b")]), SPARK, root=root, path="ns.t", **opts)
    assert ids(root) == [0, 1, 2, 3, 5, 8]


def test_static_replaces_everything(root):
    opts = {"partitionOverwriteMode": "static"}
    write(batch([(100, "a")]), SPARK, overwrite=True, root=root, path="ns.t", **opts)
    assert ids(root) == [100]


def test_partition_by_creates_an_identity_partitioned_table(root):
    write(batch([(1, "x"), (2, "y")]), SPARK, root=root, path="ns.p", **{"partition-by": "cat"})
    table = TrinityCatalog("l", root=root).load_table("ns.p")
    assert [(str(f.transform), f.name) for f in table.spec().fields] == [("identity", "cat")]
    with pytest.raises(InvalidArgumentError, match="does not match the partition spec"):
        write(batch([(3, "x")]), SPARK, root=root, path="ns.p", **{"partition-by": "id"})
