"""Spark-application helpers: one catalog commit for several writes, and temp views.

with trinityfs.spark.transaction(root="./lake") as txn:
    orders.write.format("trinitylake").options(**txn.options).mode("append").save("s.orders")
    totals.write.format("trinitylake").options(**txn.options).mode("overwrite").save("s.totals")
txn.committed_version        # ONE catalog version with both writes (or none at all)

trinityfs.spark.register_views(spark, root="./lake", version=12)   # every table
spark.sql("SELECT * FROM sales_orders")
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from trinityfs.spark.read import open_catalog


@dataclass
class SparkTransaction:
    """A catalog transaction that Spark writes join with `.options(**txn.options)`."""

    id: str
    options: dict[str, str] = field(default_factory=dict)
    committed_version: int | None = None


@contextmanager
def transaction(*, root: str, **catalog_options: str) -> Iterator[SparkTransaction]:
    """Writes made with `.options(**txn.options)` inside the block are staged in one
    catalog transaction (a distributed one: Spark commits jobs from other processes);
    leaving the block commits them as ONE catalog version; an exception (e.g. a failed
    second write) commits nothing. Files of staged writes that never commit are left
    for `TrinityCatalog.reclaim_files()`."""
    props = {"root": root, **catalog_options}
    catalog = open_catalog(props)
    lake = catalog.lakehouse
    dtxn = lake.begin_distributed()
    dtxn.save()
    handle = SparkTransaction(dtxn.id, {**props, "transaction": dtxn.id})
    try:
        yield handle
    except BaseException:
        lake.load_distributed(dtxn.id).abort()
        raise
    handle.committed_version = lake.load_distributed(dtxn.id).commit()


def register_views(
    spark: Any,
    *,
    root: str,
    version: int | str | None = None,
    timestamp: str | None = None,
    name_format: str = "{namespace}_{table}",
    **options: str,
) -> dict[str, str]:
    """Register every table of ONE catalog version (the latest, or `version`/`timestamp`)
    as a Spark temp view named by `name_format`; returns {view name: "ns.table"}."""
    from trinityfs.spark import register
    from trinityfs.spark.options import READ, parse_options

    register(spark)
    props: dict[str, str] = {"root": root, **options}
    if version is not None:
        props["version"] = str(version)
    if timestamp is not None:
        props["timestamp"] = str(timestamp)
    opts = parse_options(props, READ)
    catalog = open_catalog(opts.catalog, opts.version)
    pinned = str(catalog.current_version())
    views: dict[str, str] = {}
    for (ns,) in catalog.list_namespaces():
        for _, table in catalog.list_tables(ns):
            view = name_format.format(namespace=ns, table=table)
            reader = spark.read.format("trinitylake").options(**options)
            reader = reader.option("root", root).option("version", pinned)
            reader = reader.option("namespace", ns).option("table", table)
            reader.load().createOrReplaceTempView(view)
            views[view] = f"{ns}.{table}"
    return views


__all__ = ["SparkTransaction", "register_views", "transaction"]
