"""Regression: the in-process PyIceberg catalog and the REST server disagreed about views
of one lakehouse. An Iceberg view created over REST (a TrinityLake view pointing at
Iceberg view metadata) was listed, found and loaded by RestCatalog, while
TrinityCatalog.list_views() returned [], view_exists() False, and load_view() and
drop_view() raised NoSuchViewError ("TrinityLake views are not Iceberg views") for it;
list_views() also left out the TrinityLake views the REST server lists.

Now TrinityCatalog applies the REST server's rule (trinityfs/iceberg/pointer.py:
view_metadata_location_of): it lists every view, finds and loads Iceberg views, and
drops views, as REST does. Found 2026-11-25 (helper adversary3); fails on 187bd6c.
"""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchViewError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from trinityfs import Lakehouse
from trinityfs.rest.server import ServerConfig, ServerThread

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
SQL = "select id from ns.t"


@pytest.fixture
def catalogs(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns", {})
    lake.create_view("ns", "plain", {"properties": {"sql": "select 1"}})
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        rest = load_catalog("rest", type="rest", uri=server.url, prefix="latest")
        version = ViewVersion(
            version_id=1,
            schema_id=0,
            timestamp_ms=1,
            summary={},
            representations=[SQLViewRepresentation(type="sql", sql=SQL, dialect="spark")],
            default_namespace=["ns"],
        )
        rest.create_view(("ns", "ice"), SCHEMA, version)
        local = load_catalog(
            "lake", **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": root}
        )
        yield rest, local
    finally:
        server.stop()


def test_both_catalogs_list_find_and_load_the_same_views(catalogs):
    rest, local = catalogs
    assert sorted(local.list_views("ns")) == sorted(rest.list_views("ns"))
    # a TrinityLake view that is no Iceberg view is not listed (trinityfs/iceberg/objects.py)
    assert sorted(local.list_views("ns")) == [("ns", "ice")]
    for name, found in (("ice", True), ("plain", False), ("nope", False)):
        assert local.view_exists(("ns", name)) is found
        assert rest.view_exists(("ns", name)) is found
    view = local.load_view(("ns", "ice"))
    assert SQL in view.current_version().model_dump_json()
    assert view.metadata == rest.load_view(("ns", "ice")).metadata
    for name in ("plain", "nope"):
        with pytest.raises(NoSuchViewError):
            local.load_view(("ns", name))


def test_drop_view_in_process_drops_what_rest_drops(catalogs):
    rest, local = catalogs
    local.drop_view(("ns", "ice"))
    assert not rest.view_exists(("ns", "ice"))
    with pytest.raises(NoSuchViewError):
        local.drop_view(("ns", "ice"))
    assert local.list_views("ns") == []
    with pytest.raises(NoSuchViewError):  # no Iceberg view: not dropped
        local.drop_view(("ns", "plain"))
