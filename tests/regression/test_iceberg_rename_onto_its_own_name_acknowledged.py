"""REST POST /tables/rename of a table onto its own name answered 204 (TrinityCatalog's
rename_table returned the table) although the destination exists: the spec's 409 ("the
target identifier to rename to already exists as a table or view"), which the Java
reference catalogs (InMemoryCatalog, JdbcCatalog) answer with AlreadyExistsException.
Views the same (POST /views/rename).

Now it is refused everywhere alike: TableAlreadyExistsError / ViewAlreadyExistsError,
409 AlreadyExistsException over REST, no new catalog version. A source that is missing or
no Iceberg table stays 404 (checked first)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
VIEW = {
    "name": "iv",
    "schema": {"type": "struct", "schema-id": 0, "fields": []},
    "view-version": {
        "version-id": 1,
        "timestamp-ms": 0,
        "schema-id": 0,
        "summary": {},
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
        "default-namespace": ["ns"],
    },
}


def ident(name: str) -> dict:
    return {"namespace": ["ns"], "name": name}


@pytest.fixture
def served(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "delta", {"table_format": "DELTA"})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        rest = load_catalog("rest", type="rest", uri=server.url, prefix="latest")
        rest.create_table(("ns", "t"), SCHEMA)
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            assert http.post("/namespaces/ns/views", json=VIEW).status_code == 200
            yield root, rest, http
    finally:
        server.stop()


@pytest.mark.parametrize("what", ["tables", "views"])
def test_rest_rename_onto_itself_is_409(served, what: str) -> None:
    root, _, http = served
    name = "t" if what == "tables" else "iv"
    before = Lakehouse.open(root).latest_version()
    got = http.post(f"/{what}/rename", json={"source": ident(name), "destination": ident(name)})
    assert got.status_code == 409, got.text
    error = got.json()["error"]
    assert error == {"message": error["message"], "type": "AlreadyExistsException", "code": 409}
    assert Lakehouse.open(root).latest_version() == before
    assert http.head(f"/namespaces/ns/{what}/{name}").status_code == 204


def test_clients_rename_onto_itself_raise_already_exists(served) -> None:
    root, rest, _ = served
    trinity = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    before = Lakehouse.open(root).latest_version()
    for catalog in (rest, trinity):
        with pytest.raises(TableAlreadyExistsError):
            catalog.rename_table("ns.t", "ns.t")
        with pytest.raises(NoSuchTableError):  # a missing source is still 404 first
            catalog.rename_table("ns.nope", "ns.nope")
        with pytest.raises(NoSuchTableError):  # as a source of another format
            catalog.rename_table("ns.delta", "ns.delta")
        assert catalog.table_exists("ns.t")
    assert Lakehouse.open(root).latest_version() == before
