"""Regression: `register_table(..., overwrite=True)` (PyIceberg in process, and REST
POST /register with "overwrite": true) replaced whatever held the name: a TrinityLake
view was dropped and a table put in its place, and a DELTA table was turned into an
Iceberg table keeping the Delta table's id and properties. Both objects were lost
without a word; without overwrite the same call was TableAlreadyExistsError. And
`create_table_transaction` over a DELTA table's name failed with
NoSuchIcebergTableError ("no such table") where create_table says it already exists.

Overwrite replaces an Iceberg table's pointer; a view or a table of another format
holding the name is now TableAlreadyExistsError (REST 409) and stays as it was; a
create transaction over a non-Iceberg table is TableAlreadyExistsError like create.
Found 2026-11-25 (helper adversary3); fails on 187bd6c.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.exceptions import TableAlreadyExistsError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
VIEW = {"properties": {"sql": "select 1"}}
DELTA = {"table_format": "DELTA", "properties": {"delta.x": "1"}}


@pytest.fixture
def lake(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "delta", DELTA)
    lake.create_view("ns", "v", VIEW)
    catalog = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    ice = catalog.create_table(("ns", "ice"), SCHEMA)
    return root, catalog, ice.metadata_location


def _unchanged(root: str) -> None:
    lake = Lakehouse.open(root)
    assert lake.list_views("ns") == ["v"]
    assert dict(lake.describe_view("ns", "v").properties) == VIEW["properties"]
    delta = lake.describe_table("ns", "delta")
    assert delta.table_format == "DELTA" and dict(delta.properties) == DELTA["properties"]


@pytest.mark.parametrize("name", ["v", "delta"])
def test_register_overwrite_keeps_a_view_or_delta_table(lake, name):
    root, catalog, location = lake
    with pytest.raises(TableAlreadyExistsError, match="not an Iceberg table"):
        catalog.register_table(("ns", name), location, overwrite=True)
    _unchanged(root)
    catalog.register_table(("ns", "ice"), location, overwrite=True)  # an Iceberg table: yes


@pytest.mark.parametrize("name", ["v", "delta"])
def test_rest_register_overwrite_keeps_a_view_or_delta_table(lake, name):
    root, _, location = lake
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            body = {"name": name, "metadata-location": location, "overwrite": True}
            r = http.post("/namespaces/ns/register", json=body)
    finally:
        server.stop()
    assert r.status_code == 409, r.text
    _unchanged(root)


def test_create_transaction_over_a_delta_table_already_exists(lake):
    root, catalog, _ = lake
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table_transaction(("ns", "delta"), SCHEMA).commit_transaction()
    _unchanged(root)
