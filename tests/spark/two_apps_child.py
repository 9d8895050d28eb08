"""One Spark *application* of tests/spark/test_two_applications.py (run as a subprocess).

    python two_apps_child.py ROOT APP FIRST_ID OUT_JSON

Starts its own local Spark (its own JVM), then appends to two tables of ROOT:
- ns.noretry (table property commit.retry.num-retries=0): one append of ids
  FIRST_ID..FIRST_ID+99; a TrinityLakeWriteConflict is caught and the job rerun, as an
  application would;
- ns.retry (PyIceberg's default commit retries): one append of FIRST_ID+1000.., then
  three more (FIRST_ID+2000.., +3000.., +4000..) as fast as it can.

The test's sitecustomize (see the test) holds each application's first commit to each
table until the other application's first commit arrives, so both commit against the
same base snapshot. Writes what happened to OUT_JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> None:
    root, app, first, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import trinityfs.spark

    spark = (
        SparkSession.builder.master("local[1]")
        .appName(f"trinityfs-two-apps-{app}")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    trinityfs.spark.register(spark)
    report: dict = {"app": app, "conflicts": [], "appended": {"ns.noretry": [], "ns.retry": []}}

    def append(table: str, start: int, n: int) -> None:
        df = spark.range(start, start + n, numPartitions=2).selectExpr("id", "'" + app + "' as app")
        for attempt in range(6):
            try:
                df.write.format("trinitylake").option("root", root).mode("append").save(table)
                report["appended"][table].append([start, n, attempt])
                return
            except Exception as exc:  # the job's error, as PySpark raises it
                text = str(exc)
                if "TrinityLakeWriteConflict" not in text:
                    raise
                line = next(
                    (ln for ln in text.splitlines() if "TrinityLakeWriteConflict:" in ln), text
                )
                report["conflicts"].append([table, start, line.strip()[:400]])
                time.sleep(0.2)
        raise SystemExit(f"{app}: {table} append {start} kept conflicting")

    append("ns.noretry", first, 100)
    append("ns.retry", first + 1000, 100)
    for k in (2, 3, 4):
        append("ns.retry", first + 1000 * k, 100)
    spark.stop()
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
