"""Issue 14 on a real local Spark: strict options, time travel, type rules, overwrite
modes, partitioning, pushdown, one commit for several writes, Spark SQL views."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import pyarrow as pa
import pytest
from lake_fixtures import flip
from pyiceberg.catalog import load_catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DateType, LongType, NestedField, StringType

import trinityfs.spark
from trinityfs import Lakehouse

pytestmark = pytest.mark.spark


def iceberg(root):
    return load_catalog(
        "t", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )


def read(spark, root, table="ns.t", **options):
    r = spark.read.format("trinitylake").option("root", root)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(table)


def write(df, root, table="ns.t", mode="append", **options):
    w = df.write.format("trinitylake").option("root", root).mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    w.save(table)


def ids(df):
    return sorted(r["id"] for r in df.select("id").collect())


def test_unknown_option_and_unsafe_cast_fail_before_any_work(spark, lake_root):
    cat = iceberg(lake_root)
    cat.create_table("ns.t", pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.int64())]))
    before = Lakehouse.open(lake_root).latest_version()
    df = spark.createDataFrame([(1, 1.7), (2, 1e20)], "id long, v double")
    with pytest.raises(Exception, match="'v'"):
        write(df, lake_root)
    ok = spark.createDataFrame([(1, 5)], "id long, v long")
    with pytest.raises(Exception, match=r"replacewhere.*overwrite-filter"):
        write(ok, lake_root, mode="overwrite", replaceWhere="id = 1")
    with pytest.raises(Exception, match="did you mean 'snapshot-id'"):
        read(spark, lake_root, **{"snapshotid2": "1"}).collect()
    assert Lakehouse.open(lake_root).latest_version() == before


def test_verify_tree_option_refuses_a_write_over_damage(spark, lake_root, monkeypatch):
    """option("verify", "tree"): the write's commit verifies the whole tree first and
    fails naming the damaged file of another table; nothing is committed."""
    monkeypatch.delenv("TRINITYFS_VERIFY", raising=False)
    lake = Lakehouse.open(lake_root)
    lake.create_table("ns", "other", {"table_format": "ICEBERG"})
    location = lake.snapshot().object_location("table", "ns", "other")
    flip(Path(lake_root) / location)
    before = lake.latest_version()
    df = spark.createDataFrame([(1,), (2,)], "id long")
    with pytest.raises(Exception, match=location.rpartition("/")[2]):
        write(df, lake_root, verify="tree")
    assert Lakehouse.open(lake_root).latest_version() == before
    with pytest.raises(Exception, match=r"option 'verify': 'everything' is not"):
        write(df, lake_root, verify="everything")
    write(df, lake_root)  # the default mode does not look at that file
    assert ids(read(spark, lake_root)) == [1, 2]


def test_time_travel_options_read_what_pyiceberg_reads(spark, lake_root):
    cat = iceberg(lake_root)
    table = cat.create_table("ns.t", pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    version_after_first = cat.table_version("ns.t")
    time.sleep(0.01)
    table = cat.load_table("ns.t")
    table.append(pa.table({"id": pa.array([3], pa.int64())}))
    table = cat.load_table("ns.t")
    first, second = (s.snapshot_id for s in table.metadata.snapshots)
    table.manage_snapshots().create_tag(first, "v1").create_branch(second, "dev").commit()
    table = cat.load_table("ns.t")

    def pyiceberg_ids(sid):
        return sorted(table.scan(snapshot_id=sid).to_arrow()["id"].to_pylist())

    assert ids(read(spark, lake_root, **{"snapshot-id": str(first)})) == pyiceberg_ids(first)
    ts = table.metadata.snapshot_by_id(first).timestamp_ms
    assert ids(read(spark, lake_root, **{"as-of-timestamp": str(ts)})) == pyiceberg_ids(first)
    assert ids(read(spark, lake_root, tag="v1")) == pyiceberg_ids(first) == [1, 2]
    assert ids(read(spark, lake_root, branch="dev")) == pyiceberg_ids(second) == [1, 2, 3]
    # a catalog version first, then a snapshot of the table as it was in it
    old = read(spark, lake_root, version=str(version_after_first), **{"snapshot-id": str(first)})
    assert ids(old) == [1, 2]
    with pytest.raises(Exception, match="no snapshot"):
        read(spark, lake_root, version=str(version_after_first), **{"snapshot-id": str(second)})
    with pytest.raises(Exception, match="give one of"):
        read(spark, lake_root, tag="v1", branch="dev")


def test_overwrite_static_dynamic_and_filter(spark, lake_root):
    cat = iceberg(lake_root)
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "cat", StringType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
    cat.create_table("ns.t", schema, partition_spec=spec)
    base = spark.createDataFrame([(i, "abc"[i % 3]) for i in range(9)], "id long, cat string")
    write(base, lake_root)
    new_a = spark.createDataFrame([(100, "a")], "id long, cat string")
    with pytest.raises(Exception, match="partitionOverwriteMode"):
        write(new_a, lake_root, mode="overwrite")  # never guessed on a partitioned table
    write(new_a, lake_root, mode="overwrite", partitionOverwriteMode="dynamic")
    assert ids(read(spark, lake_root)) == [1, 2, 4, 5, 7, 8, 100]  # only cat=a replaced
    write(
        spark.createDataFrame([(5, "b")], "id long, cat string"),
        lake_root,
        mode="overwrite",
        **{"overwrite-filter": "id >= 4 and id < 8"},
    )
    assert ids(read(spark, lake_root)) == [1, 2, 5, 8, 100]
    with pytest.raises(Exception, match="do not match"):
        write(new_a, lake_root, mode="overwrite", **{"overwrite-filter": "id > 1000"})
    write(new_a, lake_root, mode="overwrite", partitionOverwriteMode="static")
    assert ids(read(spark, lake_root)) == [100]


def test_partition_by_and_table_specs(spark, lake_root):
    df = spark.createDataFrame([(1, "x"), (2, "y"), (3, "x")], "id long, cat string")
    # Spark itself refuses DataFrameWriter.partitionBy for a Python data source (its table
    # reports no partitioning), loudly: the option partition-by is the way
    with pytest.raises(Exception, match="partitioning"):
        df.write.format("trinitylake").option("root", lake_root).mode("append").partitionBy(
            "cat"
        ).save("ns.p")
    write(df, lake_root, "ns.p", **{"partition-by": "cat"})
    table = iceberg(lake_root).load_table("ns.p")
    assert [str(f.transform) for f in table.spec().fields] == ["identity"]
    assert table.scan(row_filter="cat == 'x'").to_arrow().num_rows == 2
    # a day-partitioned table made by PyIceberg: Spark appends honour its spec
    cat = iceberg(lake_root)
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "day", DateType()))
    cat.create_table(
        "ns.d", schema, partition_spec=PartitionSpec(PartitionField(2, 1000, DayTransform(), "d"))
    )
    days = spark.createDataFrame(
        [(1, date(2026, 1, 1)), (2, date(2026, 1, 2))], "id long, day date"
    )
    write(days, lake_root, "ns.d")
    files = list(cat.load_table("ns.d").scan().plan_files())
    assert len(files) == 2


def test_reused_dataframe_and_filter_option_stay_exact(spark, lake_root):
    """One DataFrame, many queries: every result exact (a reader pushing Spark filters
    got `id = 7 or id = 250` wrong after `id < 20` on Spark 4.3.0, see read.py)."""
    rows = [(i, f"s{i % 7}" if i % 5 else None) for i in range(300)]
    df = spark.createDataFrame(rows, "id long, s string").repartition(3, "id")
    write(df, lake_root)
    t = read(spark, lake_root)
    cases = {
        "id < 20": lambda r: r[0] < 20,
        "id = 7 or id = 250": lambda r: r[0] in (7, 250),
        "id in (3, 4, 299)": lambda r: r[0] in (3, 4, 299),
        "s is null": lambda r: r[1] is None,
        "not (s = 's1')": lambda r: r[1] is not None and r[1] != "s1",
        "s like 's1%' and id >= 100": lambda r: (r[1] or "").startswith("s1") and r[0] >= 100,
        "s like '%1'": lambda r: (r[1] or "").endswith("1"),
    }
    for expr, keep in cases.items():
        assert ids(t.filter(expr)) == sorted(r[0] for r in rows if keep(r)), expr
    assert t.count() == 300
    pruned = read(spark, lake_root, filter="id < 20")
    assert ids(pruned) == list(range(20)) and ids(pruned.filter("id > 15")) == [16, 17, 18, 19]
    assert pruned.count() == 20


def test_several_writes_one_catalog_version_or_none(spark, lake_root):
    lake = Lakehouse.open(lake_root)
    a = spark.createDataFrame([(1, "a")], "id long, name string")
    with trinityfs.spark.transaction(root=lake_root) as txn:
        write(a, lake_root, "ns.one", **{"transaction": txn.id})
        write(a, lake_root, "ns.two", **{"transaction": txn.id})
        assert not iceberg(lake_root).table_exists("ns.one")  # nothing visible yet
    assert txn.committed_version == lake.latest_version()
    changed = {c.object.name for c in lake.changes(txn.committed_version)}
    assert changed == {"one", "two"}

    before = lake.latest_version()
    bad = spark.createDataFrame([(1, 1.5)], "id long, name double")
    with (
        pytest.raises(Exception, match="unsafe cast"),
        trinityfs.spark.transaction(root=lake_root) as txn,
    ):
        write(a, lake_root, "ns.one", transaction=txn.id)
        write(bad, lake_root, "ns.two", transaction=txn.id)  # fails: nothing lands
    assert lake.latest_version() == before
    assert ids(read(spark, lake_root, "ns.one")) == [1]


def test_sql_temporary_view_and_views_of_a_version(spark, lake_root):
    write(spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string"), lake_root)
    spark.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW tv USING trinitylake "
        f"OPTIONS (root '{lake_root}', path 'ns.t')"
    )
    assert spark.sql("SELECT count(*) AS n FROM tv").collect()[0]["n"] == 2
    version = Lakehouse.open(lake_root).latest_version()
    write(spark.createDataFrame([(3, "c")], "id long, name string"), lake_root)
    views = trinityfs.spark.register_views(spark, root=lake_root, version=version)
    assert views == {"ns_t": "ns.t"}
    assert spark.sql("SELECT count(*) AS n FROM ns_t").collect()[0]["n"] == 2
