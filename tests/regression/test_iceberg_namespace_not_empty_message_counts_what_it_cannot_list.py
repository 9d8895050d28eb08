"""A namespace drop refused as not empty said "not empty (2 tables, first 'delta');
drop them first" while the Iceberg listing of that namespace showed one table and no
view: the catalog's message counted tables of every format but named one Iceberg clients
never see, and it stopped at the tables (views were not counted at all).

Now REST DELETE /namespaces/{ns} (409 NamespaceNotEmptyException, the spec's error JSON)
and TrinityCatalog.drop_namespace (NamespaceNotEmptyError) count every table and view the
drop is refused for, and name the first few of each, saying which are no Iceberg tables or
views (so they are missing from the listing). Nothing is dropped."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.exceptions import NamespaceNotEmptyError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


@pytest.fixture
def served(tmp_path):
    """ns holds the Iceberg table ice, the Delta table delta and the plain view v."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "delta", {"table_format": "DELTA"})
    lake.create_view("ns", "v", {})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        rest = load_catalog("rest", type="rest", uri=server.url, prefix="latest")
        rest.create_table(("ns", "ice"), SCHEMA)
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            yield root, rest, http
    finally:
        server.stop()


def check_message(message: str) -> None:
    assert "2 tables" in message and "1 view" in message, message
    assert "'ice'" in message and "'delta' (not an Iceberg table)" in message, message
    assert "'v' (not an Iceberg view)" in message, message


def test_rest_drop_counts_and_names_every_object(served) -> None:
    root, rest, http = served
    assert rest.list_tables("ns") == [("ns", "ice")] and rest.list_views("ns") == []
    before = Lakehouse.open(root).latest_version()
    got = http.delete("/namespaces/ns")
    assert got.status_code == 409, got.text
    error = got.json()["error"]
    assert error["type"] == "NamespaceNotEmptyException" and error["code"] == 409
    check_message(error["message"])
    with pytest.raises(NamespaceNotEmptyError) as info:
        rest.drop_namespace("ns")
    check_message(str(info.value))
    assert Lakehouse.open(root).latest_version() == before


def test_trinity_catalog_drop_counts_and_names_every_object(served) -> None:
    root, _, _ = served
    catalog = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    with pytest.raises(NamespaceNotEmptyError) as info:
        catalog.drop_namespace("ns")
    check_message(str(info.value))
    assert catalog.namespace_exists("ns")


def test_many_objects_are_counted_and_a_few_named(served) -> None:
    root, rest, _ = served
    lake = Lakehouse.open(root)
    for i in range(5):
        lake.create_table("ns", f"more{i}", {"table_format": "DELTA"})
    with pytest.raises(NamespaceNotEmptyError) as info:
        rest.drop_namespace("ns")
    message = str(info.value)
    assert "7 tables" in message and "4 more" in message and "more4" not in message, message
