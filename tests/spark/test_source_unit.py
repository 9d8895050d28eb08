"""The trinitylake data source's reader and writer, driven without a JVM.

Spark pickles the writer to executors, calls write() with Arrow batches in the session
time zone, pickles the commit messages back and calls commit() or abort() on the
driver. These tests do exactly that by hand, so races can be interleaved
deterministically.
"""

from __future__ import annotations

import json
import pickle
import threading
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyspark.sql import types as T

from trinityfs import Lakehouse
from trinityfs.catalog.ranges import scan_range, split_points
from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.options import READ, WRITE, parse_options
from trinityfs.spark.read import CatalogScanReader, FilePartition, TableReader, pack
from trinityfs.spark.source import CATALOG_SCHEMA
from trinityfs.spark.types import conform, iceberg_schema_from_spark, to_spark_arrow_schema
from trinityfs.spark.write import TableWriter, TrinityLakeWriteConflict

LA = "America/Los_Angeles"
SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType(), False),
        T.StructField("small", T.ByteType(), False),
        T.StructField("name", T.StringType(), True),
        T.StructField("price", T.DecimalType(10, 2), True),
        T.StructField("at", T.TimestampType(), True),
        T.StructField("local", T.TimestampNTZType(), True),
        T.StructField("day", T.DateType(), True),
        T.StructField("tags", T.ArrayType(T.IntegerType()), True),
        T.StructField("attrs", T.MapType(T.StringType(), T.LongType()), True),
        T.StructField("addr", T.StructType([T.StructField("city", T.StringType())]), True),
    ]
)


def spark_batch(ids: list[int]) -> pa.RecordBatch:
    """A batch as Spark hands it to a writer: session-zone timestamps, narrow ints."""
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), False),
            pa.field("small", pa.int8(), False),
            pa.field("name", pa.string()),
            pa.field("price", pa.decimal128(10, 2)),
            pa.field("at", pa.timestamp("us", tz=LA)),
            pa.field("local", pa.timestamp("us")),
            pa.field("day", pa.date32()),
            pa.field("tags", pa.list_(pa.int32())),
            pa.field("attrs", pa.map_(pa.string(), pa.int64())),
            pa.field("addr", pa.struct([pa.field("city", pa.string())])),
        ]
    )
    n = len(ids)
    return pa.RecordBatch.from_pylist(
        [
            {
                "id": i,
                "small": i % 100,
                "name": None if i % 3 == 0 else f"n{i}",
                "price": Decimal(i) / 4,
                "at": datetime(2026, 1, 1, tzinfo=UTC).replace(hour=i % 24),
                "local": datetime(2026, 1, 1, i % 24),
                "day": date(2026, 1, 1 + i % 28),
                "tags": [i, i + 1],
                "attrs": [("k", i)],
                "addr": {"city": f"c{i}"},
            }
            for i in ids
        ][:n],
        schema=schema,
    )


def props(root: str) -> dict[str, str]:
    return {"root": root}


def wplan(root: str, table: str, schema, overwrite: bool, **options: str) -> TableWriter:
    opts = parse_options({"root": root, "path": f"ns.{table}", **options}, WRITE)
    return TableWriter.plan(opts, schema, overwrite)


def ropts(root: str, **options: str):
    return parse_options({"root": root, "path": "ns.t", **options}, READ)


def plan(root: str, overwrite: bool = False, table: str = "t") -> TableWriter:
    writer = wplan(root, table, SCHEMA, overwrite, **{"snapshot-properties": '{"job": "test"}'})
    return pickle.loads(pickle.dumps(writer))  # as Spark ships it


def run_task(writer: TableWriter, *batches: pa.RecordBatch):
    executor_copy = pickle.loads(pickle.dumps(writer))
    return pickle.loads(pickle.dumps(executor_copy.write(iter(batches))))


def catalog(root: str):
    return load_catalog(
        "t", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )


def data_files(root: str, table: str = "t") -> set[Path]:
    d = Path(root) / "warehouse" / "ns" / table / "data"
    return set(d.rglob("*.parquet")) if d.exists() else set()


def ids_of(root: str, table: str = "t") -> list[int]:
    return sorted(catalog(root).load_table(f"ns.{table}").scan().to_arrow()["id"].to_pylist())


# -- writing ----------------------------------------------------------------------------


def test_write_creates_table_with_one_commit_and_converted_types(lake_root):
    lake = Lakehouse.open(lake_root)
    before = lake.latest_version()
    writer = plan(lake_root)
    assert writer.created and lake.latest_version() == before  # planning commits nothing
    messages = [run_task(writer, spark_batch([1, 2])), run_task(writer, spark_batch([3])), None]
    writer.commit(messages)
    assert lake.latest_version() == before + 1  # table + first snapshot: one version

    table = catalog(lake_root).load_table("ns.t")
    assert len(table.metadata.snapshots) == 1
    assert table.metadata.snapshots[0].summary["job"] == "test"
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["small"] == "int" and types["at"] == "timestamptz"
    assert types["local"] == "timestamp" and types["price"] == "decimal(10, 2)"
    assert all(not f.required for f in table.schema().fields)  # see spark/types.py
    got = table.scan().to_arrow().sort_by("id")
    assert got["id"].to_pylist() == [1, 2, 3]
    # the instant survives the session time zone
    assert got["at"].to_pylist()[0] == datetime(2026, 1, 1, 1, tzinfo=UTC)
    assert got["local"].to_pylist()[0] == datetime(2026, 1, 1, 1)
    assert got["attrs"].to_pylist()[0] == [("k", 1)]
    assert got["addr"].to_pylist()[2] == {"city": "c3"}


def test_required_column_null_is_reported_by_name(lake_root):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    catalog(lake_root).create_table(
        "ns.req", Schema(NestedField(1, "id", LongType(), required=True))
    )
    schema = T.StructType([T.StructField("id", T.LongType(), True)])
    writer = wplan(lake_root, "req", schema, False)
    ok = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int64())})
    writer.commit([writer.write(iter([ok]))])  # nullable in Spark, no nulls: fine
    bad = pa.RecordBatch.from_pydict({"id": pa.array([None], pa.int64())})
    with pytest.raises(ValueError, match="'id' is required"):
        writer.write(iter([bad]))
    assert len(data_files(lake_root, "req")) == 1


def test_dataframe_shape_checked_before_writing(lake_root):
    plan(lake_root).commit([run_task(plan(lake_root), spark_batch([0]))])
    wider = T.StructType([*SCHEMA.fields, T.StructField("surprise", T.StringType())])
    with pytest.raises(ValueError, match=r"\['surprise'\] are not in table ns.t"):
        wplan(lake_root, "t", wider, False)
    # fewer columns: the others are null; odd Spark types map to Iceberg ones
    narrow = T.StructType([T.StructField("id", T.LongType(), False)])
    w = wplan(lake_root, "t", narrow, False)
    w.commit([w.write(iter([pa.RecordBatch.from_pydict({"id": pa.array([5], pa.int64())})]))])
    got = catalog(lake_root).load_table("ns.t").scan(row_filter="id == 5").to_arrow()
    assert got["name"].to_pylist() == [None]
    with pytest.raises(ValueError, match="interval"):
        iceberg_schema_from_spark(T.StructType([T.StructField("d", T.DayTimeIntervalType())]))
    odd = iceberg_schema_from_spark(
        T.StructType(
            [
                T.StructField("n", T.NullType()),
                T.StructField("s", T.ShortType()),
                T.StructField("c", T.CharType(3)),
            ]
        )
    )
    assert [str(f.field_type) for f in odd.fields] == ["string", "int", "string"]
    nulls = pa.RecordBatch.from_pydict({"n": pa.nulls(2)})
    assert conform(nulls, pa.schema([("n", pa.string())]), check_nulls=True)["n"].null_count == 2


def test_interleaved_appends_both_land(lake_root):
    plan(lake_root).commit([run_task(plan(lake_root), spark_batch([0]))])
    a, b = plan(lake_root), plan(lake_root)  # two jobs planned on the same snapshot
    ma, mb = run_task(a, spark_batch([1, 2])), run_task(b, spark_batch([3]))
    a.commit([ma])
    b.commit([mb])  # rebased by PyIceberg's retry: no lost append
    assert ids_of(lake_root) == [0, 1, 2, 3]


def test_interleaved_creates_both_land(lake_root):
    a, b = plan(lake_root), plan(lake_root)
    assert a.created and b.created
    ma, mb = run_task(a, spark_batch([1])), run_task(b, spark_batch([2]))
    a.commit([ma])
    b.commit([mb])  # the table appeared meanwhile with the same schema: append to it
    assert ids_of(lake_root) == [1, 2]


def test_overwrite_after_a_concurrent_append_fails_clearly(lake_root):
    plan(lake_root).commit([run_task(plan(lake_root), spark_batch([0]))])
    over, app = plan(lake_root, overwrite=True), plan(lake_root)
    mo, ma = run_task(over, spark_batch([9])), run_task(app, spark_batch([1]))
    app.commit([ma])
    written = set(map(Path, (p.removeprefix("file://") for p in mo.paths)))
    assert written and written <= data_files(lake_root)
    with pytest.raises(TrinityLakeWriteConflict, match="changed while the job ran"):
        over.commit([mo])
    assert ids_of(lake_root) == [0, 1]  # the append is not lost
    assert not written & data_files(lake_root)  # the loser's files are gone

    # an overwrite that did not race replaces everything in one snapshot
    over = plan(lake_root, overwrite=True)
    before = len(catalog(lake_root).load_table("ns.t").metadata.snapshots)
    over.commit([run_task(over, spark_batch([7, 8]))])
    table = catalog(lake_root).load_table("ns.t")
    assert ids_of(lake_root) == [7, 8]
    assert len(table.metadata.snapshots) == before + 1
    assert table.metadata.snapshots[-1].summary.operation.value == "overwrite"


def test_failed_task_and_aborted_job_leave_no_files(lake_root, monkeypatch):
    import trinityfs.spark.write as source

    monkeypatch.setattr(source, "ABORT_MIN_SECONDS", 1.5)
    monkeypatch.setattr(source, "ABORT_QUIET_SECONDS", 0.5)
    writer = plan(lake_root)

    def failing():
        yield spark_batch([1, 2])
        raise RuntimeError("executor lost")

    with pytest.raises(RuntimeError, match="executor lost"):
        pickle.loads(pickle.dumps(writer)).write(failing())
    assert data_files(lake_root) == set()

    ok = run_task(writer, spark_batch([3]))
    assert len(data_files(lake_root)) == 1
    # a task that died without cleaning up: its file carries the job id
    orphan = Path(lake_root) / "warehouse/ns/t/data" / f"00000-42-{writer.job_id}.parquet"
    orphan.write_bytes(b"partial")
    # a task still being cancelled writes after the abort began
    late = orphan.with_name(f"00000-43-{writer.job_id}.parquet")
    timer = threading.Timer(0.7, late.write_bytes, args=(b"late",))
    timer.start()
    writer.abort([ok, None])
    timer.join()
    assert data_files(lake_root) == set()
    assert not catalog(lake_root).table_exists("ns.t")


# -- reading ------------------------------------------------------------------------------


def test_table_reader_splits_by_file_and_reads_only_selected_columns(lake_root, monkeypatch):
    for ids in ([1, 2], [3], [4, 5, 6]):
        w = plan(lake_root)
        w.commit([run_task(w, spark_batch(ids))])
    wanted = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("at", T.TimestampType())]
    )
    # split-size=1: every file its own task
    reader = pickle.loads(
        pickle.dumps(TableReader(ropts(lake_root, **{"split-size": "1"}), wanted))
    )
    parts = reader.partitions()
    assert len(parts) == 3 and all(isinstance(p, FilePartition) for p in parts)
    assert all(len(p.files) == 1 for p in parts)

    import pyiceberg.io.pyarrow as pyarrow_io

    projections = []
    real = pyarrow_io.ArrowScan.__init__

    def spy(self, table_metadata, io, projected_schema, *args, **kwargs):
        projections.append([f.name for f in projected_schema.fields])
        real(self, table_metadata, io, projected_schema, *args, **kwargs)

    monkeypatch.setattr(pyarrow_io.ArrowScan, "__init__", spy)
    batches = [b for p in parts for b in pickle.loads(pickle.dumps(reader)).read(p)]
    assert projections == [["id", "at"]] * 3
    assert all(b.schema == to_spark_arrow_schema(wanted) for b in batches)
    assert sorted(i for b in batches for i in b["id"].to_pylist()) == [1, 2, 3, 4, 5, 6]

    # an old catalog version reads the table as it was
    old = TableReader(ropts(lake_root, version="2"), wanted)
    assert len(old.partitions()) == 1


def test_small_files_are_packed_into_few_tasks_and_read_once(lake_root):
    """8 tiny files on a 2-task parallelism: 2 tasks (one Python round trip per task is
    what made a many-file scan slow), every row read exactly once, in scan order."""
    for i in range(8):
        w = plan(lake_root)
        w.commit([run_task(w, spark_batch([10 * i, 10 * i + 1]))])
    wanted = T.StructType([T.StructField("id", T.LongType())])
    reader = TableReader(ropts(lake_root, parallelism="2"), wanted)
    parts = pickle.loads(pickle.dumps(reader.partitions()))
    assert [len(p.files) for p in parts] == [4, 4]
    paths = [path for p in parts for path, _ in p.files]
    assert len(set(paths)) == 8
    ids = [
        i
        for p in parts
        for b in pickle.loads(pickle.dumps(reader)).read(p)
        for i in b["id"].to_pylist()
    ]
    assert sorted(ids) == sorted(i for k in range(8) for i in (10 * k, 10 * k + 1))
    one = TableReader(ropts(lake_root, parallelism="1"), wanted).partitions()
    assert [len(p.files) for p in one] == [8]
    # the table property caps a task (the option overrides it)
    catalog(lake_root).load_table("ns.t").transaction().set_properties(
        {"read.split.target-size": "1"}
    ).commit_transaction()
    capped = TableReader(ropts(lake_root, parallelism="1"), wanted).partitions()
    assert [len(p.files) for p in capped] == [1] * 8
    wide = TableReader(ropts(lake_root, parallelism="1", **{"split-size": str(2**40)}), wanted)
    assert [len(p.files) for p in wide.partitions()] == [8]


def test_pack_follows_sparks_file_rule():
    mib = 2**20
    assert pack([], 128 * mib, 2) == []
    assert pack([6 * mib] * 8, 128 * mib, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert pack([6 * mib] * 8, 128 * mib, 8) == [[i] for i in range(8)]
    assert pack([6 * mib] * 8, 15 * mib, 1) == [[i] for i in range(8)]  # split-size caps
    assert pack([500 * mib, 1, 1], 128 * mib, 1) == [[0], [1, 2]]  # a big file alone


def test_split_options_are_checked(lake_root):
    for bad in ({"split-size": "0"}, {"parallelism": "-1"}, {"parallelism": "two"}):
        with pytest.raises(InvalidArgumentError, match=next(iter(bad))):
            ropts(lake_root, **bad)
    with pytest.raises(InvalidArgumentError, match=r"parallelism.*table read"):
        parse_options({"root": lake_root, "parallelism": "2"}, READ)
    w = plan(lake_root)
    w.commit([run_task(w, spark_batch([1]))])
    catalog(lake_root).load_table("ns.t").transaction().set_properties(
        {"read.split.target-size": "lots"}
    ).commit_transaction()
    with pytest.raises(InvalidArgumentError, match=r"read\.split\.target-size"):
        TableReader(ropts(lake_root), T.StructType([T.StructField("id", T.LongType())]))


def test_catalog_scan_ranges_cover_every_object_once(tmp_path):
    root = str(tmp_path / "small")
    lake = Lakehouse.create(
        root,
        order=4,
        namespace_name_max_size_bytes=16,
        table_name_max_size_bytes=16,
        view_name_max_size_bytes=16,
        node_file_max_size_bytes=4 * (16 + 16 + 204) + 600,
    )
    expected = set()
    for n in range(3):
        with lake.transaction() as txn:
            txn.create_namespace(f"n{n}", {"team": str(n)})
            expected.add(("namespace", f"n{n}", None))
            for t in range(25):
                txn.create_table(f"n{n}", f"t{t:02d}", {"properties": {"i": str(t)}})
                expected.add(("table", f"n{n}", f"t{t:02d}"))
            txn.create_view(f"n{n}", "v", {})
            expected.add(("view", f"n{n}", "v"))

    snap = lake.at()
    points = split_points(snap, 8)
    assert 1 < len(points) <= 7 and points == sorted(
        points, key=lambda r: (r.kind, r.namespace, r.name or "")
    )
    bounds = [None, *points, None]
    seen = [
        (ref.kind, ref.namespace, ref.name)
        for i in range(len(bounds) - 1)
        for ref, _ in scan_range(snap, bounds[i], bounds[i + 1])
    ]
    assert len(seen) == len(set(seen)) and set(seen) == expected

    reader = pickle.loads(
        pickle.dumps(
            CatalogScanReader(parse_options({"root": root, "splits": "4"}, READ), CATALOG_SCHEMA)
        )
    )
    parts = reader.partitions()
    assert 1 < len(parts) <= 4
    rows = []
    for p in parts:
        for batch in reader.read(p):
            rows.extend(batch.to_pylist())
    assert {(r["kind"], r["namespace"], r["name"]) for r in rows} == expected
    assert len(rows) == len(expected) and {r["version"] for r in rows} == {3}
    t07 = next(r for r in rows if r["name"] == "t07" and r["namespace"] == "n1")
    assert json.loads(t07["definition"])["properties"] == {"i": "7"}
    assert t07["properties"] == [("i", "7")]


def test_conform_converts_sliced_nested_arrays():
    src = (
        pa.table(
            {
                "l": pa.array([[1], [2, 3], None, [4]], pa.list_(pa.int8())),
                "m": pa.array(
                    [[("a", 1)], [("b", 2)], None, [("c", 3)]], pa.map_(pa.string(), pa.int8())
                ),
                "s": pa.array([{"x": 1}, {"x": 2}, None, {"x": 3}], pa.struct([("x", pa.int8())])),
                "t": pa.array([0, 1, 2, 3], pa.timestamp("us", tz=LA)),
            }
        )
        .to_batches()[0]
        .slice(1, 3)
    )
    target = pa.schema(
        [
            ("l", pa.list_(pa.int64())),
            ("m", pa.map_(pa.string(), pa.int64())),
            ("s", pa.struct([("x", pa.int64())])),
            ("t", pa.timestamp("us", tz="UTC")),
        ]
    )
    out = conform(src, target, check_nulls=True)
    assert out.schema == target
    assert out.to_pylist() == [
        {"l": [2, 3], "m": [("b", 2)], "s": {"x": 2}, "t": datetime(1970, 1, 1, 0, 0, 0, 1, UTC)},
        {"l": None, "m": None, "s": None, "t": datetime(1970, 1, 1, 0, 0, 0, 2, UTC)},
        {"l": [4], "m": [("c", 3)], "s": {"x": 3}, "t": datetime(1970, 1, 1, 0, 0, 0, 3, UTC)},
    ]


def test_existing_partitioned_table_is_written_per_partition(lake_root):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    catalog(lake_root).create_table(
        "ns.p",
        Schema(NestedField(1, "id", LongType()), NestedField(2, "cat", StringType())),
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat")),
    )
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("cat", T.StringType())])
    batch = pa.RecordBatch.from_pydict({"id": pa.array([1, 2, 3], pa.int64()), "cat": list("aba")})
    w = wplan(lake_root, "p", schema, False)
    message = run_task(w, batch)
    assert sorted(p.split("/data/")[1].split("/")[0] for p in message.paths) == ["cat=a", "cat=b"]
    w.commit([message])
    table = catalog(lake_root).load_table("ns.p")
    assert sorted(table.scan(row_filter="cat == 'a'").to_arrow()["id"].to_pylist()) == [1, 3]
