"""Hostile requests: bad JSON, huge bodies, path tricks in identifiers, locations outside
the warehouse, properties naming classes. Each is a 4xx in the spec's error model,
never a 500, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trinityfs import Lakehouse

pytestmark = pytest.mark.rest

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}


def error_of(response, status: int, type_: str | None = None) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == status and error["message"]
    if type_ is not None:
        assert error["type"] == type_, error
    return error["message"]


@pytest.fixture
def sales(http):
    r = http.post("/v1/latest/namespaces", json={"namespace": ["sales"]})
    assert r.status_code == 200, r.text
    return http


JSON = {"content-type": "application/json"}


def create(http, name: str, **extra):
    return http.post(
        "/v1/latest/namespaces/sales/tables", json={"name": name, "schema": SCHEMA, **extra}
    )


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'"a string"',
        b"",
        b"\xff\xfe\x00",
        b"[" * 100_000,
        b'{"namespace": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    ],
)
def test_bad_json_is_400(sales, body):
    r = sales.post("/v1/latest/namespaces", content=body, headers=JSON)
    error_of(r, 400, "BadRequestException")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"namespace": "sales2"}, "list of strings"),
        ({"namespace": []}, "empty"),
        ({"namespace": ["a", "b"]}, "one level"),
        ({"namespace": ["x"], "properties": {"k": 1}}, "strings"),
        ({"namespace": ["bad name"]}, "space"),
        ({"namespace": ["x" * 500]}, "bytes"),
    ],
)
def test_bad_namespace_requests_are_400(sales, body, needle):
    assert needle in error_of(sales.post("/v1/latest/namespaces", json=body), 400)


def test_bad_table_requests_are_400(sales, lake_root):
    before = Lakehouse.open(lake_root).latest_version()
    error_of(create(sales, ""), 400)
    error_of(sales.post("/v1/latest/namespaces/sales/tables", json={"name": "t"}), 400)
    error_of(create(sales, "t", schema={"type": "struct", "fields": "no"}), 400)
    error_of(create(sales, "t", **{"stage-create": "yes"}), 400)
    error_of(create(sales, "t", **{"partition-spec": {"fields": [{"bogus": 1}]}}), 400)
    sales.post("/v1/latest/namespaces/sales/tables", json={"name": "ok", "schema": SCHEMA})
    commit = "/v1/latest/namespaces/sales/tables/ok"
    # unknown update actions and requirement types are 400, as the spec demands
    r = sales.post(commit, json={"requirements": [], "updates": [{"action": "drop-everything"}]})
    error_of(r, 400, "BadRequestException")
    r = sales.post(commit, json={"requirements": [{"type": "assert-magic"}], "updates": []})
    error_of(r, 400, "BadRequestException")
    r = sales.post(
        commit,
        json={"requirements": [], "updates": [{"action": "set-current-schema", "schema-id": 99}]},
    )
    error_of(r, 400)
    r = sales.post(
        commit,
        json={
            "identifier": {"namespace": ["sales"], "name": "other"},
            "requirements": [],
            "updates": [],
        },
    )
    assert "does not match" in error_of(r, 400)
    error_of(sales.delete(commit, params={"purgeRequested": "maybe"}), 400)
    error_of(sales.get("/v1/latest/namespaces", params={"pageSize": "-3"}), 400)
    error_of(sales.get(commit, params={"snapshots": "some"}), 400)
    error_of(sales.post("/v1/latest/tables/rename", json={"source": "x", "destination": {}}), 400)
    error_of(sales.post("/v1/latest/transactions/commit", json={"table-changes": "x"}), 400)
    r = sales.post("/v1/latest/transactions/commit", json={"table-changes": [{"updates": []}]})
    error_of(r, 400)
    assert Lakehouse.open(lake_root).latest_version() == before + 1  # only "ok" was created


def test_huge_body_is_413_before_reading_it(sales, start_thread, lake_root):
    server = start_thread(lake_root, max_body_bytes=4096)
    import httpx

    with httpx.Client(base_url=server.url) as client:
        big = {"namespace": ["big"], "properties": {"k": "v" * 10_000}}
        assert "4096" in error_of(client.post("/v1/latest/namespaces", json=big), 413)

        def chunks():  # no Content-Length: counted while streaming
            for _ in range(100):
                yield b" " * 1000

        r = client.post("/v1/latest/namespaces", content=chunks(), headers=JSON)
        error_of(r, 413)
        assert client.get("/v1/latest/namespaces/big").status_code == 404


@pytest.mark.parametrize(
    "name",
    ["..", "a/b", "a/../../../../tmp/x", ".", "t\\x"],
)
def test_path_tricks_in_names_never_leave_the_warehouse(sales, lake_root, name):
    before = Lakehouse.open(lake_root).latest_version()
    r = create(sales, name)
    assert r.status_code == 400, r.text
    assert "location" in r.json()["error"]["message"]
    assert Lakehouse.open(lake_root).latest_version() == before


def test_encoded_slashes_stay_inside_one_identifier(sales, lake_root):
    from urllib.parse import quote

    # a namespace holding '/' is one namespace; its tables need an explicit location
    r = sales.post("/v1/latest/namespaces", json={"namespace": ["a/b"]})
    assert r.status_code == 200, r.text
    assert sales.get("/v1/latest/namespaces/a%2Fb").json()["namespace"] == ["a/b"]
    assert sales.head("/v1/latest/namespaces/a%2Fb").status_code == 204
    # '/v1/latest/namespaces/a/b' is not that namespace: it names no endpoint
    assert sales.get("/v1/latest/namespaces/a/b").status_code == 404
    warehouse = Path(lake_root) / "warehouse"
    location = f"file://{warehouse}/explicit"
    r = sales.post(
        f"/v1/latest/namespaces/{quote('a/b', safe='')}/tables",
        json={"name": "t", "schema": SCHEMA, "location": location},
    )
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["location"] == location
    # '..' encoded as %2E%2E is an identifier, not a path step
    assert sales.get("/v1/latest/namespaces/%2E%2E").status_code == 404
    assert sales.get("/v1/latest/namespaces/sales/tables/%2E%2E%2F%2E%2E").status_code == 404
    # a multi-level namespace (%1F) does not exist here
    r = sales.get("/v1/latest/namespaces/sales%1Fdeeper")
    assert "one level" in error_of(r, 404, "NoSuchNamespaceException")
    # raw non-ASCII bytes in the path
    assert sales.get("/v1/latest/namespaces/%FF").status_code == 400


@pytest.mark.parametrize(
    "location",
    [
        "file:///etc/trinity",
        "/tmp/elsewhere",
        "s3://other-bucket/t",
        "file://{warehouse}/../escape",
        "file://{warehouse}/a/%2E%2E/%2E%2E/escape",
        "file://{warehouse}",
        "relative/path",
        "file://{warehouse}-sibling/t",
    ],
)
def test_locations_outside_the_warehouse_are_refused(sales, lake_root, location):
    warehouse = Path(lake_root) / "warehouse"
    location = location.format(warehouse=warehouse)
    before = Lakehouse.open(lake_root).latest_version()
    r = create(sales, "t", location=location)
    assert r.status_code in (400, 403), r.text
    sales.post("/v1/latest/namespaces/sales/tables", json={"name": "ok", "schema": SCHEMA})
    r = sales.post(
        "/v1/latest/namespaces/sales/tables/ok",
        json={"requirements": [], "updates": [{"action": "set-location", "location": location}]},
    )
    assert r.status_code in (400, 403), r.text
    r = sales.post(
        "/v1/latest/namespaces/sales/tables/ok",
        json={
            "requirements": [],
            "updates": [{"action": "set-properties", "updates": {"write.metadata.path": location}}],
        },
    )
    assert r.status_code in (400, 403), r.text
    r = sales.post(
        "/v1/latest/namespaces", json={"namespace": ["n"], "properties": {"location": location}}
    )
    assert r.status_code in (400, 403), r.text
    r = sales.post(
        "/v1/latest/namespaces/sales/register",
        json={"name": "reg", "metadata-location": location + "/metadata/v1.metadata.json"},
    )
    assert r.status_code in (400, 403), r.text
    assert Lakehouse.open(lake_root).latest_version() == before + 1  # only "ok"


def test_allowed_locations_are_configurable(start_thread, lake_root, tmp_path):
    import httpx

    extra = tmp_path / "shared-data"
    server = start_thread(lake_root, allowed_locations=[f"file://{extra}"])
    with httpx.Client(base_url=server.url) as client:
        client.post("/v1/latest/namespaces", json={"namespace": ["sales"]})
        r = create(client, "t", location=f"file://{extra}/t")
        assert r.status_code == 200, r.text
        assert (extra / "t" / "metadata").is_dir()


def test_properties_naming_classes_are_refused(sales, lake_root, tmp_path):
    for key in ("py-io-impl", "write.py-location-provider.impl"):
        r = create(sales, "t", properties={key: "os.system"})
        assert "class" in error_of(r, 403, "ForbiddenException")
    sales.post("/v1/latest/namespaces/sales/tables", json={"name": "ok", "schema": SCHEMA})
    r = sales.post(
        "/v1/latest/namespaces/sales/tables/ok",
        json={
            "requirements": [],
            "updates": [{"action": "set-properties", "updates": {"py-io-impl": "x.Y"}}],
        },
    )
    error_of(r, 403, "ForbiddenException")
    # a metadata file inside the warehouse that carries such a property cannot be registered
    metadata = json.loads(sales.get("/v1/latest/namespaces/sales/tables/ok").text)["metadata"]
    metadata["properties"] = {"py-io-impl": "os.system"}
    planted = Path(lake_root) / "warehouse" / "sales" / "planted.metadata.json"
    planted.write_text(json.dumps(metadata))
    r = sales.post(
        "/v1/latest/namespaces/sales/register",
        json={"name": "evil", "metadata-location": f"file://{planted}"},
    )
    error_of(r, 403, "ForbiddenException")
    r = sales.post(
        "/v1/latest/namespaces/sales/register",
        json={"name": "missing", "metadata-location": f"file://{planted}.nope"},
    )
    assert "cannot register" in error_of(r, 400)


def test_unknown_endpoints_and_methods_are_spec_errors(http):
    error_of(http.get("/v1/latest/nothing-here"), 404)
    error_of(http.put("/v1/latest/namespaces"), 405)
    error_of(http.get("/"), 404)


def test_a_pointer_outside_the_warehouse_is_never_followed(sales, lake_root, tmp_path):
    # another front end (or a hostile writer with catalog access) points a table elsewhere
    secret = tmp_path / "secret.metadata.json"
    secret.write_text('{"not": "for clients"}')
    lake = Lakehouse.open(lake_root)
    definition = {
        "table_format": "ICEBERG",
        "format_properties": {"metadata_location": f"file://{secret}"},
    }
    lake.create_table("sales", "pointed", definition)
    r = sales.get("/v1/latest/namespaces/sales/tables/pointed")
    message = error_of(r, 403, "ForbiddenException")
    assert str(secret) in message and "for clients" not in r.text
