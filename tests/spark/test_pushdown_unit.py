"""The `filter` read option, driven without a JVM: an Iceberg row filter that prunes
files by statistics and partitions at planning and filters rows inside the reader."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from trinityfs.errors import InvalidArgumentError
from trinityfs.iceberg import TrinityCatalog
from trinityfs.spark.source import TrinityLakeDataSource


def _read(root: str, row_filter: str):
    ds = TrinityLakeDataSource({"root": root, "path": "ns.t", "filter": row_filter})
    reader = pickle.loads(pickle.dumps(ds.reader(ds.schema())))  # as Spark ships it
    parts = reader.partitions()
    files = [path for p in parts for path, _ in p.files]  # the data files planned
    return files, pa.Table.from_batches([b for p in parts for b in reader.read(p)])


def _table(root: str, partitioned: bool) -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "cat", StringType()))
    spec = (
        PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
        if partitioned
        else PartitionSpec()
    )
    table = TrinityCatalog("t", root=root).create_table("ns.t", schema, partition_spec=spec)
    for f in range(5):  # 5 appends: sorted id ranges, one category each
        ids = list(range(f * 1000, (f + 1) * 1000))
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "cat": pa.array([f"c{f}"] * 1000)}))


def test_range_filter_prunes_files_by_stats_and_rows_in_the_reader(lake_root):
    _table(lake_root, partitioned=False)
    parts, rows = _read(lake_root, "id < 10")
    assert len(parts) == 1  # 4 of 5 files pruned by their min/max
    assert sorted(rows["id"].to_pylist()) == list(range(10))


def test_partition_filter_reads_only_that_partition(lake_root):
    _table(lake_root, partitioned=True)
    parts, rows = _read(lake_root, "cat = 'c3'")
    assert len(parts) == 1 and rows.num_rows == 1000
    assert set(rows["cat"].to_pylist()) == {"c3"}


def test_null_and_negation_semantics(lake_root):
    _table(lake_root, partitioned=False)
    _, rows = _read(lake_root, "not cat = 'c1' and id < 2500")
    assert sorted(set(rows["cat"].to_pylist())) == ["c0", "c2"] and rows.num_rows == 1500


def test_bad_filter_is_refused_naming_the_option(lake_root):
    _table(lake_root, partitioned=False)
    with pytest.raises(InvalidArgumentError, match=r"'filter'.*nope"):
        _read(lake_root, "nope > 3")
