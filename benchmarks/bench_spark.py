"""Spark reading a table through `trinitylake` vs Spark's own Parquet reader, same files.

Writes one Iceberg table (PyIceberg, --files Parquet data files, --rows rows in all) into
a fresh local lakehouse, then, in one local[N] Spark session, times the same queries
over the same data files read two ways:

- trinitylake: spark.read.format("trinitylake").load("bench.events")  (Python data
  source: the driver plans the scan with PyIceberg, executors read with pyarrow and
  hand Arrow batches to the JVM);
- parquet:     spark.read.parquet(<the table's current data files>)  (Spark's
  vectorized JVM reader).

Queries (issue 14's list): a full scan aggregating every column; one column by plain
`.select("value")` (both readers), and by `.option("columns", "value")` (trinitylake:
Spark 4 gives Python sources no column-pruning hook, so the plain select decodes every
column); `count()`; a 1% selective filter on the sorted column `id` (trinitylake: the
`filter` read option, as Spark filters are not pushed; see trinityfs/spark/read.py); and
a partition filter on a second, identity-partitioned table (same). Each is run
--repeat times after one warm-up, interleaved per query; best and median wall times,
the ratio to Parquet, and machine-independent counts: files read and rows handed to
Spark (trinitylake: counted by driving the reader exactly as Spark does; parquet: rows
of the row groups Spark's vectorized reader keeps after min/max pruning, as it does no
record-level filtering by default).

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


def build_partitioned(root: str, rows: int, parts: int) -> list[str]:
    """bench.parts: identity-partitioned on `bucket` (id % parts), one append per bucket
    group; returns its data files."""
    import numpy as np
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog
    from pyiceberg.transforms import IdentityTransform

    cat = load_catalog(
        "bench", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    ids = np.arange(rows, dtype=np.int64)
    data = pa.table({"id": ids, "bucket": pa.array(ids % parts, pa.int32())})
    table = cat.create_table("bench.parts", schema=data.schema)
    with table.update_spec() as spec:
        spec.add_field("bucket", IdentityTransform(), "bucket")
    table = cat.load_table("bench.parts")
    for chunk in np.array_split(np.arange(rows), 4):  # 4 appends x parts partitions
        table.append(data.slice(int(chunk[0]), len(chunk)))
    return [t.file.file_path for t in cat.load_table("bench.parts").scan().plan_files()]


def reader_counts(root: str, table: str, row_filter: str) -> tuple[int, int]:
    """(files, rows) the trinitylake reader hands Spark for this `filter` option."""
    import pickle

    from trinityfs.spark.source import TrinityLakeDataSource

    ds = TrinityLakeDataSource({"root": root, "path": table, "filter": row_filter})
    reader = pickle.loads(pickle.dumps(ds.reader(ds.schema())))
    parts = reader.partitions()
    return len(parts), sum(b.num_rows for p in parts for b in reader.read(p))


def parquet_counts(files: list[str], column: str, below: int) -> tuple[int, int]:
    """(files, rows) Spark's Parquet reader keeps for `column < below`: row groups whose
    min is below the bound (it prunes by row-group statistics only)."""
    import pyarrow.parquet as pq

    kept_files = kept_rows = 0
    for path in files:
        meta = pq.ParquetFile(path.removeprefix("file://")).metadata
        idx = meta.schema.names.index(column)
        rows = sum(
            meta.row_group(g).num_rows
            for g in range(meta.num_row_groups)
            if meta.row_group(g).column(idx).statistics.min < below
        )
        kept_files += rows > 0
        kept_rows += rows
    return kept_files, kept_rows


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
    part_paths = build_partitioned(root, args.rows, 8)
    bound = args.rows // 100

    full = [
        "count(*) AS n",
        "sum(id)",
        "sum(value)",
        "max(category)",
        "max(length(name))",
        "max(ts)",
    ]

    def lake_df(table="bench.events", **opts):
        r = spark.read.format("trinitylake").option("root", root)
        for k, v in opts.items():
            r = r.option(k, v)
        return r.load(table)

    def pq_parts():
        return spark.read.parquet(*part_paths)

    cases = {
        "full scan, all 5 columns": (
            lambda: lake_df().selectExpr(*full).collect(),
            lambda: spark.read.parquet(*files).selectExpr(*full).collect(),
        ),
        "one column, plain .select": (
            lambda: lake_df().select("value").selectExpr("sum(value)").collect(),
            lambda: spark.read.parquet(*files).select("value").selectExpr("sum(value)").collect(),
        ),
        "one column, columns option": (
            lambda: lake_df(columns="value").selectExpr("sum(value)").collect(),
            lambda: spark.read.parquet(*files).select("value").selectExpr("sum(value)").collect(),
        ),
        "count()": (
            lambda: [(lake_df().count(),)],
            lambda: [(spark.read.parquet(*files).count(),)],
        ),
        f"1% filter id < {bound}": (
            lambda: lake_df(filter=f"id < {bound}").selectExpr(*full).collect(),
            lambda: spark.read.parquet(*files).filter(f"id < {bound}").selectExpr(*full).collect(),
        ),
        "partition filter bucket=3": (
            lambda: (
                lake_df("bench.parts", filter="bucket = 3")
                .selectExpr("count(*)", "sum(id)")
                .collect()
            ),
            lambda: pq_parts().filter("bucket = 3").selectExpr("count(*)", "sum(id)").collect(),
        ),
    }
    print(f"spark local[{args.cores}], best / median of {args.repeat} after a warm-up:")
    print(f"{'query':28} {'reader':12} {'best s':>8} {'median s':>9} {'x parquet':>9}")
    for name, (lake_q, pq_q) in cases.items():
        results, bests = [], []
        for reader, q in (("trinitylake", lake_q), ("parquet", pq_q)):
            best, median, result = timed(q, args.repeat)
            results.append(result)
            bests.append(best)
            ratio = f"{bests[0] / best:9.2f}" if reader == "parquet" else ""
            print(f"{name:28} {reader:12} {best:8.2f} {median:9.2f} {ratio}", flush=True)
        assert _same(results[0], results[1]), results
    spark.stop()

    lake_files, lake_rows = reader_counts(root, "bench.events", f"id < {bound}")
    pq_files, pq_rows = parquet_counts(files, "id", bound)
    print(f"\n1% filter id < {bound} ({bound:,} matching rows):")
    print(f"  trinitylake: {lake_files} of {len(files)} files read, {lake_rows:,} rows to Spark")
    print(f"  parquet:     {pq_files} of {len(files)} files read, {pq_rows:,} rows to Spark")
    p_files, p_rows = reader_counts(root, "bench.parts", "bucket = 3")
    print(f"partition filter bucket = 3 (table of {len(part_paths)} files in 8 partitions):")
    print(f"  trinitylake: {p_files} files read, {p_rows:,} rows to Spark")


if __name__ == "__main__":
    main()
