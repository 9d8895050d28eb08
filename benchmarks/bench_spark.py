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
the ratio to Parquet, and machine-independent counts next to them: files read
(parquet: Spark's numFiles metric; trinitylake: the files of the tasks it plans), Spark
tasks of the scan (trinitylake packs small files into tasks like Spark's file sources
do), and rows the scan handed to Spark (both: the scan's numOutputRows metric); then how
many files actually hold matching rows (the floor for "files read").

    python benchmarks/bench_spark.py --rows 2000000 --files 8 --repeat 2
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


def reader_counts(root: str, table: str, **options: str) -> tuple[int, int, int]:
    """(files, Spark tasks, rows) the trinitylake reader plans and hands Spark for these
    read options, by driving the reader exactly as Spark does (pickled, on this host)."""
    import pickle

    from trinityfs.spark.source import TrinityLakeDataSource

    ds = TrinityLakeDataSource({"root": root, "path": table, **options})
    reader = pickle.loads(pickle.dumps(ds.reader(ds.schema())))
    parts = reader.partitions()
    rows = sum(b.num_rows for p in parts for b in reader.read(p))
    return sum(len(p.files) for p in parts), len(parts), rows


def matching_files(paths: list[str], column: str, op: str, value: int) -> int:
    """How many of `paths` hold at least one row with `column <op> value` (the floor
    for any reader's file count)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    fn = {"<": pc.less, "=": pc.equal}[op]
    return sum(
        bool(
            pc.any(
                fn(pq.read_table(p.removeprefix("file://"), columns=[column])[column], value)
            ).as_py()
        )
        for p in paths
    )


def scan_metrics(df) -> tuple[int, int]:
    """(files listed, rows handed to Spark) of the scan in df's executed plan, from Spark's
    SQL metrics (AQE is off in this benchmark, so the plan is the final one); a Python
    data source reports no file count (0 here; see reader_counts)."""
    plan = df._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    files = rows = 0
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numOutputRows"):
            rows += metrics.apply("numOutputRows").value()
        if metrics.contains("numFiles"):  # Spark's file scan
            files += metrics.apply("numFiles").value()
    return files, rows


def timed(make_df, repeat: int) -> tuple[float, float, tuple[list, int, int]]:
    """Best and median wall time of collecting a fresh DataFrame (after one warm-up),
    with the last run's (result, files read, rows handed to Spark)."""
    make_df().collect()  # warm-up
    times, last = [], None
    for _ in range(repeat):
        df = make_df()
        start = time.perf_counter()
        result = [tuple(r) for r in df.collect()]
        times.append(time.perf_counter() - start)
        last = (result, *scan_metrics(df))
    return min(times), statistics.median(times), last


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
        .config("spark.sql.adaptive.enabled", "false")  # final plans, for the metrics
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

    def pq_df(paths=files, where=None):
        df = spark.read.parquet(*paths)
        return df if where is None else df.filter(where)

    one = "sum(value)"
    # query: (trinitylake table, its read options, the query on a DataFrame, parquet files,
    # the Spark filter the parquet side applies)
    cases = {
        "full scan, all 5 columns": (
            "bench.events",
            {},
            lambda d: d.selectExpr(*full),
            files,
            None,
        ),
        "one column, plain .select": (
            "bench.events",
            {},
            lambda d: d.select("value").selectExpr(one),
            files,
            None,
        ),
        "one column, columns option": (
            "bench.events",
            {"columns": "value"},
            lambda d: d.selectExpr(one),
            files,
            None,
        ),
        "count()": ("bench.events", {}, lambda d: d.groupBy().count(), files, None),  # = df.count()
        f"1% filter id < {bound}": (
            "bench.events",
            {"filter": f"id < {bound}"},
            lambda d: d.selectExpr(*full),
            files,
            f"id < {bound}",
        ),
        "partition filter bucket=3": (
            "bench.parts",
            {"filter": "bucket = 3"},
            lambda d: d.selectExpr("count(*)", "sum(id)"),
            part_paths,
            "bucket = 3",
        ),
    }
    print(f"spark local[{args.cores}], best / median of {args.repeat} after a warm-up;")
    print(
        "files = data files read (parquet: Spark's numFiles metric; trinitylake: files in the"
        " planned tasks), tasks = Spark tasks of the scan,\nrows = rows the scan handed to"
        " Spark (its numOutputRows metric); load average before: "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(
        f"{'query':28} {'reader':12} {'best s':>8} {'median s':>9} {'x parquet':>9} "
        f"{'files':>6} {'tasks':>6} {'rows to Spark':>14}"
    )
    for name, (table, opts, query, paths, where) in cases.items():
        lake_files, lake_tasks, _ = reader_counts(root, table, **opts)
        results, bests = [], []
        for reader, make in (
            ("trinitylake", lambda q=query, t=table, o=opts: q(lake_df(t, **o))),
            ("parquet", lambda q=query, p=paths, w=where: q(pq_df(p, w))),
        ):
            best, median, (result, files_read, rows_out) = timed(make, args.repeat)
            results.append(result)
            bests.append(best)
            if reader == "trinitylake":
                ratio, files_read, tasks = " " * 9, lake_files, lake_tasks
            else:
                ratio = f"{bests[0] / best:9.2f}"
                tasks = pq_df(paths, where).rdd.getNumPartitions()
            print(
                f"{name:28} {reader:12} {best:8.2f} {median:9.2f} {ratio} "
                f"{files_read:>6} {tasks:>6} {rows_out:>14,}",
                flush=True,
            )
        assert _same(results[0], results[1]), results
    spark.stop()
    print(
        f"files holding matching rows: id < {bound}: {matching_files(files, 'id', '<', bound)}"
        f" of {len(files)}; bucket = 3: {matching_files(part_paths, 'bucket', '=', 3)}"
        f" of {len(part_paths)}"
    )
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
