"""Regression: renaming an existing table to a name the catalog refuses (a space, NFD,
too long) answered "Table does not exist: ns.good (invalid table name ...)", REST 404
NoSuchTableException: a wrong answer about the source, which exists, for a bad
destination. The source is looked up first now (a missing or unusable source name is
still "no such table"); a bad destination is the caller's error: InvalidNameError
through the PyIceberg catalog, REST 400 BadRequestException naming the name. Found
2026-11-24 (helper adversary); fails on e0c4099.
"""

from __future__ import annotations

import unicodedata

import pytest

pytest.importorskip("pyiceberg")
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from trinityfs import Lakehouse
from trinityfs.errors import InvalidNameError

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
BAD = ["a b", unicodedata.normalize("NFD", "é"), "x" * 101, "t\x7f"]


@pytest.fixture
def root(tmp_path) -> str:
    Lakehouse.create(str(tmp_path / "lake"))
    return str(tmp_path / "lake")


@pytest.fixture
def catalog(root):
    impl = "trinityfs.iceberg.TrinityCatalog"
    cat = load_catalog("lake", **{"py-catalog-impl": impl, "root": root})
    cat.create_namespace("ns")
    cat.create_table(("ns", "good"), SCHEMA)
    return cat


@pytest.mark.parametrize("bad", BAD, ids=["space", "nfd", "long", "del"])
def test_pyiceberg_rename_to_a_bad_name_names_the_name(catalog, root, bad):
    before = Lakehouse.open(root).latest_version()
    with pytest.raises(InvalidNameError, match="invalid table name"):
        catalog.rename_table(("ns", "good"), ("ns", bad))
    assert Lakehouse.open(root).latest_version() == before
    assert catalog.table_exists(("ns", "good"))


def test_pyiceberg_rename_of_a_missing_or_bad_source_is_still_no_such_table(catalog):
    for source in ["missing", "a b"]:
        with pytest.raises(NoSuchTableError):
            catalog.rename_table(("ns", source), ("ns", "new"))
    catalog.rename_table(("ns", "good"), ("ns", "better"))  # and the good path still works
    assert catalog.table_exists(("ns", "better"))


@pytest.mark.parametrize("bad", BAD, ids=["space", "nfd", "long", "del"])
def test_rest_rename_to_a_bad_name_is_400(catalog, root, bad):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    from trinityfs.rest.server import ServerConfig, ServerThread

    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        response = httpx.post(
            f"{server.url}/v1/latest/tables/rename",
            json={
                "source": {"namespace": ["ns"], "name": "good"},
                "destination": {"namespace": ["ns"], "name": bad},
            },
            timeout=30,
        )
    finally:
        server.stop()
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "BadRequestException" and "invalid table name" in error["message"]
    assert "does not exist" not in error["message"]
