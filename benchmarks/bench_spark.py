"""Spark reading a table through `trinitylake` vs Spark's own Parquet reader, same files.

Writes one Iceberg table (PyIceberg, --files Parquet data files, --rows rows in all) into
a fresh local lakehouse, then, in one local[N] Spark session, times the same queries
over the same data files read two ways:

- trinitylake: spark.read.format("trinitylake").load("bench.events")  (Python data
  source: the driver plans the scan with PyIceberg, executors read with pyarrow and
  hand Arrow batches to the JVM);
- parquet:     spark.read.parquet(<the table's current data files>)  (Spark's
  vectorized JVM reader).

Queries: a full scan aggregating every column, and a one-column aggregate (trinitylake
with .option("columns", "value"), parquet with .select("value")). Each is run --repeat
times after one warm-up; the best and median wall times are printed with rows/s.

    python benchmarks/bench_spark.py --rows 2000000 --files 8 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def build_table(root: str, rows: int, files: int) -> list[str]:
    import numpy as np
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog

    from trinityfs import Lakehouse

    Lakehouse.create(root)
    cat = load_catalog(
        "bench", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    cat.create_namespace("bench")
    rng = np.random.default_rng(7)
    per = rows // files
    table = None
    for i in range(files):
        ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
        chunk = pa.table(
            {
                "id": ids,
                "value": rng.random(per),
                "category": pa.array(ids % 97, pa.int32()),
                "name": pa.array([f"name-{x % 5000}" for x in ids.tolist()]),
                "ts": pa.array(ids * 1_000_000, pa.timestamp("us", "UTC")),
            }
        )
        if table is None:
            table = cat.create_table("bench.events", schema=chunk.schema)
        table.append(chunk)
    return [task.file.file_path for task in table.scan().plan_files()]


def timed(fn, repeat: int) -> tuple[float, float, object]:
    fn()  # warm-up
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def _same(a: list, b: list) -> bool:
    """Equal results (float sums may differ in the last digits: summation order)."""
    import math

    for x, y in zip([v for r in a for v in r], [v for r in b for v in r], strict=True):
        if isinstance(x, float) and not math.isclose(x, y, rel_tol=1e-9):
            return False
        if not isinstance(x, float) and x != y:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", default=None)

    args = parser.parse_args()

    work = args.workdir or tempfile.mkdtemp(prefix="bench-spark-")
    root = os.path.join(work, "lake")
    t0 = time.perf_counter()
    files = build_table(root, args.rows, args.files)
    size = sum(os.path.getsize(f.removeprefix("file://")) for f in files)
    print(
        f"table: {args.rows:,} rows in {len(files)} Parquet files, {size / 2**20:.1f} MiB "
        f"(written in {time.perf_counter() - t0:.1f} s) under {root}"
    )

    from pyspark.sql import SparkSession

    import trinityfs.spark

    spark = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .appName("bench-spark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(args.cores))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    trinityfs.spark.register(spark)

    full = [
        "count(*) AS n",
        "sum(id)",
        "sum(value)",
        "max(category)",
        "max(length(name))",
        "max(ts)",
    ]

    def lake_df(**opts):
        r = spark.read.format("trinitylake").option("root", root)
        for k, v in opts.items():
            r = r.option(k, v)
        return r.load("bench.events")

    cases = {
        "full scan, all 5 columns": (
            lambda: lake_df().selectExpr(*full).collect(),
            lambda: spark.read.parquet(*files).selectExpr(*full).collect(),
        ),
        "one column (sum(value))": (
            lambda: lake_df(columns="value").selectExpr("sum(value)").collect(),
            lambda: spark.read.parquet(*files).select("value").selectExpr("sum(value)").collect(),
        ),
    }
    print(f"spark local[{args.cores}], best / median of {args.repeat} after a warm-up:")
    print(f"{'query':28} {'reader':12} {'best s':>8} {'median s':>9} {'Mrows/s':>8}")
    for name, (lake_q, pq_q) in cases.items():
        results = []
        for reader, q in (("trinitylake", lake_q), ("parquet", pq_q)):
            best, median, result = timed(q, args.repeat)
            results.append(result)
            rate = args.rows / best / 1e6
            print(f"{name:28} {reader:12} {best:8.2f} {median:9.2f} {rate:8.2f}", flush=True)
        assert _same(results[0], results[1]), results
    spark.stop()


if __name__ == "__main__":
    main()
