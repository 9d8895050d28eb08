"""Bug (issue 11 item 6): a table definition pointing at another lakehouse's Iceberg
metadata made a Spark append through the `trinitylake` source write data files and a
new metadata file into THAT lakehouse (and commit a pointer to them).

Now the source loads tables through the confined catalog: the append is refused before
any task runs, naming the location, and the other lakehouse is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from tests.regression.iceberg_helpers import files_under, make_lake, point_table_at, rows
from tests.spark.conftest import spark as spark_session
from trinityfs import Lakehouse
from trinityfs.iceberg import TrinityCatalog

pytestmark = pytest.mark.spark
spark = spark_session  # the session-scoped local Spark of tests/spark, as a fixture here


def test_spark_append_refused_for_a_table_pointing_into_another_lakehouse(
    spark, tmp_path: Path
) -> None:
    victim_root = make_lake(tmp_path / "victim")
    victim = TrinityCatalog("victim", root=victim_root)
    victim.create_table("ns.t", rows(0).schema).append(rows(4))
    victim_files = files_under(tmp_path / "victim")

    root = make_lake(tmp_path / "lake")
    point_table_at(root, "ns", "t", victim.load_table("ns.t").metadata_location)
    before = Lakehouse.open(root).latest_version()
    df = spark.createDataFrame([(100, "x")], "id long, name string")
    with pytest.raises(Exception, match="outside the lakehouse's allowed locations"):
        df.write.format("trinitylake").option("root", root).mode("append").save("ns.t")
    with pytest.raises(Exception, match="outside the lakehouse's allowed locations"):
        spark.read.format("trinitylake").option("root", root).load("ns.t").collect()

    assert files_under(tmp_path / "victim") == victim_files
    assert victim.load_table("ns.t").scan().to_arrow().num_rows == 4
    assert Lakehouse.open(root).latest_version() == before


def test_spark_create_refused_when_the_namespace_location_points_outside(
    spark, tmp_path: Path
) -> None:
    root = make_lake(tmp_path / "lake")
    outside = tmp_path / "elsewhere"
    Lakehouse.open(root).set_namespace_properties("ns", {"location": str(outside)})
    df = spark.createDataFrame([(1, "x")], "id long, name string")
    with pytest.raises(Exception, match="outside the lakehouse's allowed locations"):
        df.write.format("trinitylake").option("root", root).mode("append").save("ns.new")
    assert not outside.exists()
