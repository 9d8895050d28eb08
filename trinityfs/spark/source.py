"""The `trinitylake` PySpark data source (PySpark 4 Python Data Source API).

    spark.read.format("trinitylake").option("root", ROOT).load("ns.table")
    spark.read.format("trinitylake").option("root", ROOT).load()        # the catalog
    df.write.format("trinitylake").option("root", ROOT).mode("append").save("ns.table")

Options are validated before any work (trinityfs/spark/options.py, the README table);
reading is trinityfs/spark/read.py, writing trinityfs/spark/write.py.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader
from pyspark.sql.types import (
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from trinityfs.spark.options import READ, WRITE, parse_options
from trinityfs.spark.read import NAME, CatalogScanReader, TableReader, resolve_read
from trinityfs.spark.write import TableWriter, TrinityLakeWriteConflict

CATALOG_SCHEMA = StructType(
    [
        StructField("kind", StringType(), False),
        StructField("namespace", StringType(), False),
        StructField("name", StringType(), True),
        StructField("version", LongType(), False),
        StructField("definition", StringType(), True),
        StructField("properties", MapType(StringType(), StringType(), True), True),
    ]
)


class TrinityLakeDataSource(DataSource):
    """`spark.read/write.format("trinitylake")`; register with trinityfs.spark.register."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        opts = parse_options(self.options, READ)
        if opts.ident is None:
            return CATALOG_SCHEMA
        from trinityfs.spark.types import spark_schema

        return spark_schema(resolve_read(opts).schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        opts = parse_options(self.options, READ)
        if opts.ident is None:
            return CatalogScanReader(opts, CATALOG_SCHEMA)
        return TableReader(opts, schema)

    def writer(self, schema: StructType, overwrite: bool) -> TableWriter:
        return TableWriter.plan(parse_options(self.options, WRITE), schema, overwrite)


__all__ = ["CATALOG_SCHEMA", "NAME", "TrinityLakeDataSource", "TrinityLakeWriteConflict"]
