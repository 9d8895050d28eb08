"""Canary: why `trinitylake` does not implement Spark's `pushFilters` hook.

Spark 4.3 stores the read planned with pushed filters on the DataFrame's provider and
reuses it for a later query on the same DataFrame that has no convertible filter (a bare
`count()`, `collect()`): that query sees only the rows the earlier filter kept. A source
that prunes partitions in `pushFilters` therefore returns wrong results. This test shows
it with a ten-row toy source. When it fails, Spark has fixed the reuse and trinitylake
can push Spark's own `.filter` instead of relying on the `filter` option (read.py).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.spark


def _toy_source() -> type:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition, LessThan

    class Reader(DataSourceReader):
        def __init__(self) -> None:
            self.below: int | None = None

        def pushFilters(self, filters: list[Any]) -> Any:
            for f in filters:
                if isinstance(f, LessThan) and f.attribute == ("x",):
                    self.below = f.value
                else:
                    yield f

        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(10) if self.below is None or i < self.below]

        def read(self, partition: InputPartition) -> Any:
            yield (partition.value,)

    class Toy(DataSource):
        @classmethod
        def name(cls) -> str:
            return "pushdown_canary_toy"

        def schema(self) -> str:
            return "x int"

        def reader(self, schema: Any) -> Reader:
            return Reader()

    return Toy


def test_spark_reuses_a_pushed_read_for_a_later_unfiltered_query(spark: Any) -> None:
    spark.dataSource.register(_toy_source())
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "true")
    try:
        df = spark.read.format("pushdown_canary_toy").load()
        assert df.count() == 10
        assert df.filter("x < 3").count() == 3
        again = df.count()
        fresh = spark.read.format("pushdown_canary_toy").load().count()
    finally:
        spark.conf.unset(key)
    assert fresh == 10
    assert again == 3, (
        f"Spark no longer reuses a pushed read (a bare count() after a pushed filter gave "
        f"{again} of 10): pushing Spark's .filter may now be safe; see trinityfs/spark/read.py"
    )
