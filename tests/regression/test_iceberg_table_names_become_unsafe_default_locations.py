"""A table's default location is <warehouse>/<namespace>/<table>, and TrinityCatalog (so
the Spark source, which plans new tables through it) put any name there unchecked:

- `a/b` was placed inside table `a`'s directory, `.` in the namespace's directory (its
  data and metadata mixed with every table's), and the Spark source planned `.` as a new
  table, let every task write its files, and only the commit refused the name;
- `q?x` and `h#x` (and any location with `?` or `#`, over REST too) were written by
  PyArrow to the file `.../q` (the rest read as a URL query or fragment), and the table
  was committed pointing at nothing: create_table acknowledged a table that no client
  could load;
- a name the catalog refuses (`a b`) left the metadata file written for it behind.

Now one rule (trinityfs.iceberg.files) refuses, before anything is written: a name that
cannot be one directory of the default location (`.`, `..`, a slash: InvalidArgumentError,
REST 400) and a location holding `?` or `#` (LocationNotAllowedError, REST 403); a create
the catalog refuses removes its metadata file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from tests.regression.iceberg_helpers import files_under, make_lake  # noqa: E402
from trinityfs import Lakehouse  # noqa: E402
from trinityfs.errors import InvalidArgumentError, LocationNotAllowedError  # noqa: E402
from trinityfs.iceberg import TrinityCatalog  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64())])
ICEBERG_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}
SLASHED = ["a/b", "."]  # ".." was refused already (its location holds "..")
URL_SPECIAL = ["q?x", "h#x"]


def names(root: str) -> list[str]:
    return Lakehouse.open(root).snapshot().list_names("table", "ns", None, 100)


@pytest.mark.parametrize("name", SLASHED + URL_SPECIAL + ["a b"])
def test_trinity_catalog_creates_nothing_for_an_unsafe_name(tmp_path: Path, name: str) -> None:
    root = make_lake(tmp_path / "lake")
    catalog = TrinityCatalog("lake", root=root)
    catalog.create_table("ns.a", SCHEMA)
    before = files_under(tmp_path)
    expected = LocationNotAllowedError if name in URL_SPECIAL else ValueError
    with pytest.raises(expected):
        catalog.create_table(("ns", name), SCHEMA)
    assert names(root) == ["a"]
    assert files_under(tmp_path) == before  # no metadata file left anywhere


def test_explicit_location_with_a_query_or_fragment_is_refused(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    catalog = TrinityCatalog("lake", root=root)
    warehouse = catalog.properties["warehouse"]
    for location in (f"{warehouse}/ns/t?v=1", f"{warehouse}/ns/t#frag"):
        with pytest.raises(LocationNotAllowedError, match="query or fragment"):
            catalog.create_table("ns.t", SCHEMA, location=location)
    assert names(root) == []


def test_rest_refuses_unsafe_names_and_creates_nothing(tmp_path: Path) -> None:
    root = make_lake(tmp_path / "lake")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            before = files_under(tmp_path / "lake" / "warehouse")
            for name, status, kind in [
                ("q?x", 403, "ForbiddenException"),
                ("h#x", 403, "ForbiddenException"),
                ("a/b", 400, "BadRequestException"),
            ]:
                got = http.post(
                    "/namespaces/ns/tables", json={"name": name, "schema": ICEBERG_SCHEMA}
                )
                assert got.status_code == status, got.text
                error = got.json()["error"]
                assert error["type"] == kind and error["code"] == status and error["message"]
            assert names(root) == []
            assert files_under(tmp_path / "lake" / "warehouse") == before
    finally:
        server.stop()


@pytest.mark.parametrize("name", SLASHED + URL_SPECIAL)
def test_spark_write_is_refused_before_any_task(tmp_path: Path, name: str) -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql import types as T

    from tests.regression.spark_helpers import source

    root = make_lake(tmp_path / "lake")
    spark_schema = T.StructType([T.StructField("id", T.LongType())])
    expected = LocationNotAllowedError if name in URL_SPECIAL else InvalidArgumentError
    with pytest.raises(expected):
        source(root=root, namespace="ns", table=name).writer(spark_schema, False)
    assert names(root) == []
    assert not (tmp_path / "lake" / "warehouse").exists() or not files_under(
        tmp_path / "lake" / "warehouse"
    )
