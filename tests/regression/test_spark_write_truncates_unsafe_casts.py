"""Bug (issue 14): the trinitylake source cast DataFrame columns to the table's types
unsafely: 1.7 written into a long column became 1, and 1e20 became
-9223372036854775808. PyIceberg refuses the same append.

Now the source applies PyIceberg's append rules before any task runs (the error names
the column) and executors cast with overflow checks on; safe promotions still work."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake
from tests.regression.spark_helpers import read_all, write
from trinityfs.iceberg import TrinityCatalog

TABLE_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.int64())])


def _table(tmp_path: Path) -> str:
    root = make_lake(tmp_path / "lake")
    TrinityCatalog("lake", root=root).create_table("ns.t", TABLE_SCHEMA)
    return root


@pytest.mark.parametrize("value", [1.7, 1e20])
def test_double_into_long_column_is_refused_naming_the_column(tmp_path: Path, value: float) -> None:
    root = _table(tmp_path)
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("v", T.DoubleType())])
    batch = pa.RecordBatch.from_pydict(
        {"id": pa.array([1], pa.int64()), "v": pa.array([value], pa.float64())}
    )
    with pytest.raises(ValueError, match="v") as info:
        write(batch, schema, root=root, path="ns.t")
    assert "unsafe cast" in str(info.value)
    # PyIceberg refuses the same append
    with pytest.raises(ValueError):
        TrinityCatalog("lake", root=root).load_table("ns.t").append(pa.Table.from_batches([batch]))
    assert read_all(root=root, path="ns.t").num_rows == 0


def test_safe_promotion_int_into_long_still_works(tmp_path: Path) -> None:
    root = _table(tmp_path)
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("v", T.IntegerType())])
    batch = pa.RecordBatch.from_pydict(
        {"id": pa.array([1, 2], pa.int64()), "v": pa.array([2**31 - 1, -5], pa.int32())}
    )
    write(batch, schema, root=root, path="ns.t")
    assert sorted(read_all(root=root, path="ns.t")["v"].to_pylist()) == [-5, 2**31 - 1]
