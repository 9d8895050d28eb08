"""Drive the trinitylake data source the way Spark does, without a JVM (fast)."""

from __future__ import annotations

import pickle
from typing import Any

import pyarrow as pa


def source(**options: str) -> Any:
    from trinityfs.spark.source import TrinityLakeDataSource

    return TrinityLakeDataSource({k.lower(): v for k, v in options.items()})


def read_all(**options: str) -> pa.Table:
    """schema() -> reader() -> partitions() -> read(), as Spark would (pickled)."""
    ds = source(**options)
    schema = ds.schema()
    reader = pickle.loads(pickle.dumps(ds.reader(schema)))
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    if not batches:
        return pa.table({f.name: pa.array([]) for f in schema.fields})
    return pa.Table.from_batches(batches)


def write(batch: pa.RecordBatch, spark_schema: Any, overwrite: bool = False, **options: str):
    """writer() on the driver, write() on an executor, commit() back on the driver."""
    ds = source(**options)
    writer = pickle.loads(pickle.dumps(ds.writer(spark_schema, overwrite)))
    message = pickle.loads(pickle.dumps(writer.write(iter([batch]))))
    writer.commit([message])
