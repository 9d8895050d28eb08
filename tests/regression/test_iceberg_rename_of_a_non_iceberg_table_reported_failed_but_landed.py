"""Regression: TrinityCatalog.rename_table of a TrinityLake table that is not an Iceberg
table (table_format DELTA) committed the rename and then raised NoSuchIcebergTableError
(its reload of the renamed table failed): the caller was told it failed, but it had
landed. The REST server hid that error and answered 204, renaming a table its own GET
and HEAD call absent (404).

Now the rename is refused before anything changes (NoSuchIcebergTableError, a
NoSuchTableError; REST 404 NoSuchTableException), as PyIceberg's Glue catalog refuses
to rename a non-Iceberg table, and as table_exists/load_table already treat it; the
table keeps its name. Found 2026-11-25 (helper adversary3); fails on 187bd6c.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.exceptions import NoSuchTableError  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


@pytest.fixture
def root(tmp_path) -> str:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "delta", {"table_format": "DELTA"})
    return root


def _names(root: str) -> list[str]:
    return Lakehouse.open(root).list_tables("ns")


def test_trinity_catalog_refuses_to_rename_a_delta_table(root):
    catalog = load_catalog(
        "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
    )
    version = Lakehouse.open(root).latest_version()
    with pytest.raises(NoSuchTableError, match="not an Iceberg table"):
        catalog.rename_table(("ns", "delta"), ("ns", "moved"))
    assert _names(root) == ["delta"]
    assert Lakehouse.open(root).latest_version() == version  # nothing committed
    catalog.create_table(("ns", "ice"), SCHEMA)
    catalog.rename_table(("ns", "ice"), ("ns", "ice2"))  # Iceberg tables still rename
    assert _names(root) == ["delta", "ice2"]


def test_rest_rename_of_a_delta_table_is_404_like_get(root):
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            assert http.get("/namespaces/ns/tables/delta").status_code == 404
            body = {
                "source": {"namespace": ["ns"], "name": "delta"},
                "destination": {"namespace": ["ns"], "name": "moved"},
            }
            r = http.post("/tables/rename", json=body)
            assert r.status_code == 404, r.text
            assert r.json()["error"]["type"] == "NoSuchTableException"
    finally:
        server.stop()
    assert _names(root) == ["delta"]
