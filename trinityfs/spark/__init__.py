"""The `trinitylake` PySpark data source: Iceberg tables of a TrinityLake lakehouse.

    import trinityfs.spark
    trinityfs.spark.register(spark)      # once per SparkSession

    df = spark.read.format("trinitylake").option("root", "./demo-lake").load("sales.orders")
    df.write.format("trinitylake").option("root", "./demo-lake").mode("append").save("sales.out")

Needs the `spark` extra (`pip install 'trinityfs[spark]'`), PySpark >= 4.1, and workers
running the driver's Python (set PYSPARK_PYTHON to it). See the README, "Data pipelines".
"""

from __future__ import annotations

from typing import Any

from trinityfs.spark.session import SparkTransaction, register_views, transaction
from trinityfs.spark.source import (
    CATALOG_SCHEMA,
    NAME,
    TrinityLakeDataSource,
    TrinityLakeWriteConflict,
)


def register(spark: Any) -> None:
    """Register the `trinitylake` data source with a SparkSession (idempotent).

    Also makes `spark` the active session of the calling thread: Spark looks
    user-defined data sources up in the *active* session of the calling thread
    (SPARK-45600), which a new Python thread does not have, so a thread that starts
    jobs calls `register(spark)` first.
    """
    if not getattr(spark, "_trinitylake_registered", False):
        spark.dataSource.register(TrinityLakeDataSource)
        spark._trinitylake_registered = True
    try:
        jvm_session = spark._jsparkSession
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(jvm_session)
    except AttributeError:  # Spark Connect: the server keeps sessions
        pass


__all__ = [
    "CATALOG_SCHEMA",
    "NAME",
    "SparkTransaction",
    "TrinityLakeDataSource",
    "TrinityLakeWriteConflict",
    "register",
    "register_views",
    "transaction",
]
