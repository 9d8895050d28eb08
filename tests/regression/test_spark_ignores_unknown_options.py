"""Bug (issue 14): the trinitylake source dropped options it did not know without a
word: `overwrite-mode=dynamic` and `replaceWhere` were ignored (an overwrite meant for
a few partitions replaced a 200,000-row table with 5 rows), and `snapshot-id` /
`as-of-timestamp` on reads were ignored (the LATEST data came back).

Now every option is validated before any work: unknown or misspelled ones are errors
naming them (with the right name when another tool's spelling is used), and the read
options select what PyIceberg selects for the same request."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql import types as T

from tests.regression.iceberg_helpers import make_lake, rows
from tests.regression.spark_helpers import read_all, source, write
from trinityfs.errors import InvalidArgumentError
from trinityfs.iceberg import TrinityCatalog

SCHEMA = T.StructType([T.StructField("id", T.LongType()), T.StructField("name", T.StringType())])


def _table_with_two_snapshots(tmp_path: Path) -> tuple[str, list[int]]:
    root = make_lake(tmp_path / "lake")
    table = TrinityCatalog("lake", root=root).create_table("ns.t", rows(0).schema)
    table.append(rows(10))
    time.sleep(0.01)
    table.append(rows(5, start=100))
    table = TrinityCatalog("lake", root=root).load_table("ns.t")
    return root, [s.snapshot_id for s in table.metadata.snapshots]


@pytest.mark.parametrize(
    ("option", "value", "hint"),
    [
        ("overwrite-mode", "dynamic", "partitionOverwriteMode"),
        ("replaceWhere", "id > 3", "overwrite-filter"),
        ("partitionOverwriteMode", "dynamc", "static"),
        ("snapshot-properties", "not json", "JSON"),
    ],
)
def test_write_options_unknown_or_bad_are_refused_before_any_work(
    tmp_path: Path, option: str, value: str, hint: str
) -> None:
    root, _ = _table_with_two_snapshots(tmp_path)
    before = sorted(read_all(root=root, path="ns.t")["id"].to_pylist())
    batch = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int64()), "name": pa.array(["x"])})
    with pytest.raises(InvalidArgumentError) as info:
        write(batch, SCHEMA, overwrite=True, root=root, path="ns.t", **{option: value})
    assert option.lower() in str(info.value).lower() and hint in str(info.value)
    assert sorted(read_all(root=root, path="ns.t")["id"].to_pylist()) == before


def test_misspelled_read_option_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    root, _ = _table_with_two_snapshots(tmp_path)
    with pytest.raises(InvalidArgumentError, match="did you mean 'snapshot-id'"):
        source(root=root, path="ns.t", **{"snapshot-idd": "1"}).schema()
    with pytest.raises(InvalidArgumentError, match="partitionOverwriteMode"):
        source(root=root, path="ns.t", partitionOverwriteMode="dynamic").schema()


def test_snapshot_id_reads_that_snapshot_as_pyiceberg_does(tmp_path: Path) -> None:
    root, snapshots = _table_with_two_snapshots(tmp_path)
    table = TrinityCatalog("lake", root=root).load_table("ns.t")
    for sid in snapshots:
        expected = sorted(table.scan(snapshot_id=sid).to_arrow()["id"].to_pylist())
        got = sorted(
            read_all(root=root, path="ns.t", **{"snapshot-id": str(sid)})["id"].to_pylist()
        )
        assert got == expected
    assert (
        len(expected) == 15
        and len(read_all(root=root, path="ns.t", **{"snapshot-id": str(snapshots[0])})) == 10
    )


def test_as_of_timestamp_reads_the_snapshot_current_then(tmp_path: Path) -> None:
    root, snapshots = _table_with_two_snapshots(tmp_path)
    table = TrinityCatalog("lake", root=root).load_table("ns.t")
    first = table.metadata.snapshot_by_id(snapshots[0])
    got = read_all(root=root, path="ns.t", **{"as-of-timestamp": str(first.timestamp_ms)})
    expected = table.scan(
        snapshot_id=table.snapshot_as_of_timestamp(first.timestamp_ms).snapshot_id
    )
    assert sorted(got["id"].to_pylist()) == sorted(expected.to_arrow()["id"].to_pylist())
    assert got.num_rows == 10
    with pytest.raises(InvalidArgumentError, match="as-of-timestamp"):
        read_all(root=root, path="ns.t", **{"as-of-timestamp": str(first.timestamp_ms - 60_000)})
    with pytest.raises(InvalidArgumentError, match="snapshot-id"):
        read_all(root=root, path="ns.t", **{"snapshot-id": "12345"})
