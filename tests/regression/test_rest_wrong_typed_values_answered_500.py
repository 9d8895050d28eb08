"""A request whose values had the wrong type where PyIceberg's own validators trip over
them was answered 500 InternalServerError with a traceback: `set-properties` with
`updates` a list or a string (AttributeError), a `write-order` or `add-sort-order` whose
fields are not objects (AttributeError), a view's `set-current-view-version` with a list
or object id (TypeError; `true` and `1.0` were even stored as the current version id).
Now each is 400 BadRequestException and nothing is committed. Found by a type fuzzer
(every field of every update, requirement and create body set to null, numbers,
strings, lists, objects)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}
VIEW_VERSION = {
    "version-id": 1,
    "timestamp-ms": 1,
    "schema-id": 0,
    "summary": {},
    "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
    "default-namespace": ["ns"],
}
T = "/v1/latest/namespaces/ns/tables"


@pytest.fixture
def lake(tmp_path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.post(T, json={"name": "t", "schema": SCHEMA}).status_code == 200
        view = {"name": "v", "schema": SCHEMA, "view-version": VIEW_VERSION}
        assert http.post("/v1/latest/namespaces/ns/views", json=view).status_code == 200
        yield root, http
    server.stop()


def _refused(root, http, method, url, body):
    before = Lakehouse.open(root).latest_version()
    r = http.request(method, url, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "BadRequestException"
    assert Lakehouse.open(root).latest_version() == before


@pytest.mark.parametrize("value", [["a"], "x", 1, None])
def test_set_properties_updates_that_are_no_object(lake, value):
    root, http = lake
    update = {"action": "set-properties", "updates": value}
    _refused(root, http, "POST", T + "/t", {"requirements": [], "updates": [update]})
    change = {"identifier": {"namespace": ["ns"], "name": "t"}, "updates": [update]}
    _refused(root, http, "POST", "/v1/latest/transactions/commit", {"table-changes": [change]})


@pytest.mark.parametrize("fields", [[1], ["x"], [None], [[]]])
def test_sort_order_fields_that_are_no_objects(lake, fields):
    root, http = lake
    order = {"order-id": 1, "fields": fields}
    _refused(root, http, "POST", T, {"name": "t2", "schema": SCHEMA, "write-order": order})
    update = {"action": "add-sort-order", "sort-order": order}
    _refused(root, http, "POST", T + "/t", {"requirements": [], "updates": [update]})


@pytest.mark.parametrize("version_id", [[], {}, [1], True, 1.0])
def test_view_version_ids_that_are_no_integers(lake, version_id):
    root, http = lake
    update = {"action": "set-current-view-version", "view-version-id": version_id}
    _refused(root, http, "POST", "/v1/latest/namespaces/ns/views/v", {"updates": [update]})
