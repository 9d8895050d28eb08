"""Iceberg views over REST: PyIceberg's view calls (create, load, list, exists, drop) and
the raw protocol for what PyIceberg does not expose (replace, rename)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    ForbiddenError,
    NoSuchViewError,
    ViewAlreadyExistsError,
)
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from trinityfs import Lakehouse

pytestmark = pytest.mark.rest

SCHEMA = pa.schema([("id", pa.int64()), ("total", pa.float64())])


def version(sql: str) -> ViewVersion:
    return ViewVersion(
        schema_id=0,
        representations=[SQLViewRepresentation(type="sql", sql=sql, dialect="spark")],
        default_namespace=["sales"],
    )


def test_view_lifecycle(rest_catalog, http, lake_root):
    cat = rest_catalog()
    cat.create_namespace("sales")
    cat.create_namespace("archive")
    cat.create_table("sales.orders", SCHEMA)
    view = cat.create_view("sales.big", SCHEMA, version("SELECT * FROM orders WHERE total > 10"))
    assert view.metadata.current_version_id == 1
    assert cat.list_views("sales") == [("sales", "big")]
    assert cat.view_exists("sales.big") and not cat.view_exists("sales.nope")
    loaded = cat.load_view("sales.big")
    sql = loaded.metadata.versions[0].representations[0].root.sql
    assert sql == "SELECT * FROM orders WHERE total > 10"
    assert "/warehouse/sales/big" in loaded.metadata.location
    with pytest.raises(ViewAlreadyExistsError):
        cat.create_view("sales.big", SCHEMA, version("SELECT 1"))
    with pytest.raises(ViewAlreadyExistsError):  # a table's name
        cat.create_view("sales.orders", SCHEMA, version("SELECT 1"))
    with pytest.raises(NoSuchViewError):
        cat.load_view("sales.orders")
    before_replace = Lakehouse.open(lake_root).latest_version()

    # replace: a new version of the SQL (the raw CommitViewRequest Spark and Java send)
    body = {
        "requirements": [{"type": "assert-view-uuid", "uuid": loaded.metadata.view_uuid}],
        "updates": [
            {
                "action": "add-schema",
                "schema": {
                    "type": "struct",
                    "schema-id": 0,
                    "fields": [
                        {"id": 1, "name": "id", "type": "long", "required": False},
                    ],
                },
            },
            {
                "action": "add-view-version",
                "view-version": {
                    "version-id": 99,
                    "schema-id": -1,
                    "timestamp-ms": 1,
                    "summary": {},
                    "representations": [
                        {"type": "sql", "sql": "SELECT id FROM orders", "dialect": "spark"}
                    ],
                    "default-namespace": ["sales"],
                },
            },
            {"action": "set-current-view-version", "view-version-id": -1},
            {"action": "set-properties", "updates": {"comment": "ids only"}},
        ],
    }
    r = http.post("/v1/latest/namespaces/sales/views/big", json=body)
    assert r.status_code == 200, r.text
    replaced = cat.load_view("sales.big").metadata
    assert replaced.current_version_id == 2 and len(replaced.versions) == 2
    assert replaced.versions[1].schema_id == 1 and replaced.properties == {"comment": "ids only"}
    # a stale UUID is a failed requirement (409); unknown updates are 400
    body["requirements"][0]["uuid"] = "00000000-0000-0000-0000-000000000000"
    r = http.post("/v1/latest/namespaces/sales/views/big", json=body)
    assert r.status_code == 409 and r.json()["error"]["type"] == "CommitFailedException"
    r = http.post(
        "/v1/latest/namespaces/sales/views/big", json={"updates": [{"action": "explode"}]}
    )
    assert r.status_code == 400
    # time travel: the old version still has the first SQL, read-only
    old = rest_catalog(warehouse=f"v/{before_replace}")
    assert old.load_view("sales.big").metadata.current_version_id == 1
    r = http.post(f"/v1/v/{before_replace}/namespaces/sales/views/big", json=body)
    assert r.status_code == 403
    with pytest.raises(ForbiddenError):
        old.drop_view("sales.big")

    # rename across namespaces, then drop
    r = http.post(
        "/v1/latest/views/rename",
        json={
            "source": {"namespace": ["sales"], "name": "big"},
            "destination": {"namespace": ["archive"], "name": "big"},
        },
    )
    assert r.status_code == 204, r.text
    assert cat.list_views("sales") == [] and cat.view_exists("archive.big")
    r = http.post(
        "/v1/latest/views/rename",
        json={
            "source": {"namespace": ["archive"], "name": "big"},
            "destination": {"namespace": ["nope"], "name": "x"},
        },
    )
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException"
    cat.drop_view("archive.big")
    with pytest.raises(NoSuchViewError):
        cat.drop_view("archive.big")
    assert not cat.view_exists("archive.big")


def _view_body(name: str) -> dict:
    """A createView request body: an empty schema, one SQL representation in sales."""
    return {
        "name": name,
        "schema": {"type": "struct", "schema-id": 0, "fields": []},
        "view-version": {
            "version-id": 1,
            "schema-id": 0,
            "timestamp-ms": 1,
            "summary": {},
            "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
            "default-namespace": ["sales"],
        },
    }


def test_view_location_is_confined(http):
    http.post("/v1/latest/namespaces", json={"namespace": ["sales"]})
    body = {**_view_body("v"), "location": "file:///tmp/outside", "properties": {}}
    r = http.post("/v1/latest/namespaces/sales/views", json=body)
    assert r.status_code == 403, r.text
    r = http.post(
        "/v1/latest/namespaces/sales/views", json={**body, "location": None, "name": ".."}
    )
    assert r.status_code == 400, r.text
    del body["location"]
    r = http.post("/v1/latest/namespaces/sales/views", json=body)
    assert r.status_code == 200, r.text
    r = http.post(
        "/v1/latest/namespaces/sales/views/v",
        json={"updates": [{"action": "set-location", "location": "file:///etc"}]},
    )
    assert r.status_code == 403, r.text


def test_view_replace_that_loses_a_race_is_409_and_changes_nothing(lake_root, monkeypatch):
    from trinityfs.rest.server import ServerConfig, build_service
    from trinityfs.rest.views import ViewService

    views = ViewService(build_service(ServerConfig(root=lake_root)))
    views.service.catalog.create_namespace("sales")
    body = _view_body("v")
    views.create("sales", body)
    write, raced = views._write, []

    def racing_write(metadata, sequence):
        location = write(metadata, sequence)
        if not raced:  # another server replaces the view while this change is prepared
            raced.append(True)
            views.replace(
                "sales",
                "v",
                {"updates": [{"action": "set-properties", "updates": {"by": "other"}}]},
            )
        return location

    monkeypatch.setattr(views, "_write", racing_write)
    with pytest.raises(CommitFailedException):
        views.replace(
            "sales", "v", {"updates": [{"action": "set-properties", "updates": {"by": "me"}}]}
        )
    from trinityfs.rest.selector import Pin

    loaded = views.load(Pin(None, "latest"), "sales", "v")
    assert b'"by":"other"' in loaded and b'"by":"me"' not in loaded
