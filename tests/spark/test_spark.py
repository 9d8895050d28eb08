"""The trinitylake data source in a real local Spark session (local[2])."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import uuid
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pyiceberg.catalog import load_catalog
from pyspark.sql import Row
from pyspark.sql import functions as F

import trinityfs.spark
from trinityfs import Lakehouse

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def reader(spark, root, **options):
    r = spark.read.format("trinitylake").option("root", root)
    for k, v in options.items():
        r = r.option(k, v)
    return r


def writer(df, root, mode="append", **options):
    w = df.write.format("trinitylake").option("root", root).mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    return w


def rows(df, *cols):
    return sorted(tuple(r[c] for c in cols) for r in df.collect())


def iceberg(root):
    return load_catalog(
        "t", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )


def test_write_new_table_then_read_back_every_type(spark, lake_root):
    lake = Lakehouse.open(lake_root)
    df = (
        spark.createDataFrame(
            [
                (1, date(2026, 1, 2), Decimal("1.50"), "a", [1, 2], {"k": 1}, Row(c="x")),
                (2, None, None, None, None, None, None),
            ],
            "id long, day date, price decimal(10,2), name string, "
            "tags array<int>, attrs map<string,int>, addr struct<c:string>",
        )
        .withColumn("small", F.lit(7).cast("byte"))
        # a wall time in the session zone (Los Angeles): the instant 17:30 UTC
        .withColumn("at", F.when(F.col("id") == 1, F.to_timestamp(F.lit("2026-01-01 09:30:00"))))
        .withColumn("local", F.to_timestamp_ntz(F.lit("2026-01-01 00:00:00")))
    )
    before = lake.latest_version()
    writer(df, lake_root).save("ns.events")
    assert lake.latest_version() == before + 1  # one catalog commit
    table = iceberg(lake_root).load_table("ns.events")
    assert len(table.metadata.snapshots) == 1  # one Iceberg snapshot
    at = table.scan(row_filter="id == 1").to_arrow()["at"].to_pylist()[0]
    assert (at.hour, at.minute, str(at.tzinfo)) == (17, 30, "UTC")

    back = (
        reader(spark, lake_root)
        .load("ns.events")
        .withColumn("wall", F.date_format("at", "yyyy-MM-dd HH:mm"))
    )
    assert back.schema["small"].dataType.simpleString() == "int"
    got = {r["id"]: r for r in back.collect()}
    assert got[1]["wall"] == "2026-01-01 09:30" and got[2]["at"] is None
    assert got[1]["price"] == Decimal("1.50") and got[1]["tags"] == [1, 2]
    assert got[1]["attrs"] == {"k": 1} and got[1]["addr"]["c"] == "x"
    assert got[1]["local"] == datetime(2026, 1, 1) and got[2]["small"] == 7


def test_append_overwrite_time_travel_pruning_and_catalog_scan(spark, lake_root):
    lake = Lakehouse.open(lake_root)
    writer(spark.range(0, 50).withColumn("v", F.col("id") * 2), lake_root).save("ns.nums")
    v_first = lake.latest_version()
    writer(spark.range(50, 60).withColumn("v", F.col("id") * 2), lake_root).save("ns.nums")
    v_second = lake.latest_version()
    assert v_second == v_first + 1
    writer(spark.range(0, 5).withColumn("v", F.lit(0).cast("long")), lake_root, "overwrite").save(
        "ns.nums"
    )
    assert lake.latest_version() == v_second + 1

    assert reader(spark, lake_root).load("ns.nums").count() == 5
    assert reader(spark, lake_root, version=str(v_first)).load("ns.nums").count() == 50
    t_second = lake.version_info(v_second).created_at_millis
    assert reader(spark, lake_root, timestamp=str(t_second)).load("ns.nums").count() == 60

    # pruning: only the named columns are read
    only_v = reader(spark, lake_root, columns="v").load("ns.nums")
    assert only_v.columns == ["v"] and rows(only_v, "v") == [(0,)] * 5
    by_schema = reader(spark, lake_root).schema("id long").load("ns.nums")
    assert rows(by_schema, "id") == [(i,) for i in range(5)]

    # tasks: small files packed (parallelism=1: one task); split-size=1: one per file
    table = iceberg(lake_root).at(v_second).load_table("ns.nums")
    n_files = len(list(table.scan().plan_files()))
    one = reader(spark, lake_root, version=str(v_second), parallelism="1").load("ns.nums")
    assert one.rdd.getNumPartitions() == 1 and one.count() == 60
    split = {"version": str(v_second), "split-size": "1"}
    files = reader(spark, lake_root, **split).load("ns.nums")
    assert files.rdd.getNumPartitions() == n_files > 1 and files.count() == 60

    # the catalog itself, in key ranges, with Spark SQL on top
    lake.create_view("ns", "v_nums", {"properties": {"sql": "select 1"}})
    cat = reader(spark, lake_root, splits="4").load()
    cat.createOrReplaceTempView("catalog")
    got = spark.sql(
        "select kind, namespace, name, version from catalog order by kind, name"
    ).collect()
    latest = lake.latest_version()
    assert [tuple(r) for r in got] == [
        ("namespace", "ns", None, latest),
        ("table", "ns", "nums", latest),
        ("view", "ns", "v_nums", latest),
    ]
    tdef = json.loads(cat.where("kind = 'table'").first()["definition"])
    assert tdef["table_format"] == "ICEBERG"
    assert tdef["format_properties"]["metadata_location"].endswith(".metadata.json")
    assert cat.where("kind = 'view'").first()["properties"] == {"sql": "select 1"}


def test_failed_job_leaves_no_visible_change_and_no_files(spark, lake_root):
    lake = Lakehouse.open(lake_root)
    writer(spark.range(0, 10), lake_root).save("ns.safe")
    before = lake.latest_version()
    data = Path(lake_root) / "warehouse/ns/safe/data"
    files_before = set(data.iterdir())

    @F.udf("long")
    def explode_on_57(x):
        if x == 57:
            raise ValueError("bad row 57")
        return x

    bad = spark.range(0, 100, numPartitions=2).select(explode_on_57("id").alias("id"))
    with pytest.raises(Exception, match="bad row 57"):
        writer(bad, lake_root).save("ns.safe")
    with pytest.raises(Exception, match="bad row 57"):
        writer(bad, lake_root).save("ns.brand_new")
    assert lake.latest_version() == before
    assert set(data.iterdir()) == files_before
    assert not (Path(lake_root) / "warehouse/ns/brand_new").exists() or not any(
        (Path(lake_root) / "warehouse/ns/brand_new").rglob("*.parquet")
    )
    assert lake.list_tables("ns") == ["safe"]
    assert reader(spark, lake_root).load("ns.safe").count() == 10


def test_concurrent_jobs_on_one_table_both_land(spark, lake_root):
    writer(spark.range(0, 1), lake_root).save("ns.busy")
    errors = []

    def job(start):
        try:
            trinityfs.spark.register(spark)  # a new thread needs the active session
            writer(spark.range(start, start + 100, numPartitions=2), lake_root).save("ns.busy")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=job, args=(s,)) for s in (1000, 2000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, [str(e)[:3000] for e in errors]
    got = [r["id"] for r in reader(spark, lake_root).load("ns.busy").collect()]
    assert sorted(got) == [0, *range(1000, 1100), *range(2000, 2100)]


@pytest.mark.s3
def test_spark_on_s3(spark, s3_storage_options, s3_bucket):
    root = f"s3://{s3_bucket}/spark-{uuid.uuid4().hex}"
    lake = Lakehouse.create(root, storage_options=s3_storage_options)
    lake.create_namespace("ns")
    opts = {"storage-options": json.dumps(s3_storage_options)}
    df = spark.range(0, 20).withColumn("name", F.concat(F.lit("n"), F.col("id").cast("string")))
    writer(df, root, **opts).save("ns.remote")
    writer(df.limit(5), root, **opts).save("ns.remote")
    back = reader(spark, root, **opts).load("ns.remote")
    assert back.count() == 25
    assert rows(back.where("id = 3"), "name") == [("n3",), ("n3",)]
    loc = lake.describe_table("ns", "remote").format_properties["metadata_location"]
    assert loc.startswith(root + "/warehouse/ns/remote/metadata/")
    assert reader(spark, root, **opts).load().count() == 2


def _pipeline_code() -> str:
    text = (REPO / "README.md").read_text()
    match = re.search(r"<!-- pipeline -->\s*```python\n(.*?)```", text, re.S)
    assert match, "README.md has no pipeline block"
    return match.group(1)


def test_docs_pipeline_runs_as_written(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRINITYFS_ROOT", raising=False)
    exec(compile(_pipeline_code(), "README.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out
    version = int(re.search(r"catalog version (\d+)", out).group(1))
    assert re.search(r"ann\s+42\.75\s+2", out) and re.search(r"bob\s+17\.0+\s+2", out)

    lake = Lakehouse.open("./lakehouse")
    assert version == lake.latest_version()
    tdef = lake.describe_table("sales", "customer_totals")
    pointer = tdef.format_properties["metadata_location"]
    import importlib.util

    if importlib.util.find_spec("trinityfs.cli") is None:
        pytest.skip("the trinityfs CLI is not in this build")
    cli = [sys.executable, "-m", "trinityfs.cli"]
    log = subprocess.run([*cli, "log"], capture_output=True, text=True, check=True).stdout
    assert "sales.customer_totals" in log and str(version) in log
    cat = subprocess.run(
        [*cli, "cat", "sales/customer_totals"], capture_output=True, text=True, check=True
    ).stdout
    assert pointer in cat
