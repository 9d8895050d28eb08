"""Regression: an Iceberg metadata file damaged in storage (truncated, emptied, not an
object, an unknown format version) made `GET /v1/{prefix}/namespaces/ns/tables/t` and
commits to the table answer 400 BadRequestException, quoting the start of the file in a
pydantic message that did not name it: PyIceberg's ValidationError is not a ValueError,
so the server's "cannot be read" branch missed it and the error mapping took it for a
bad request body. The request was fine; the stored file is not: 500 InternalServerError
naming the metadata file, like a missing or non-UTF-8 one already was (and registering
such a file, whose location the client gives, stays 400). Found 2026-11-24 (helper
adversary); fails on e0c4099.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
DAMAGE = {
    "truncated": lambda b: b[: len(b) // 2],
    "empty": lambda b: b"",
    "array": lambda b: b"[]",
    "format-version-99": lambda b: b.replace(b'"format-version":2', b'"format-version":99'),
}


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "lake"
    Lakehouse.create(str(root))
    server = ServerThread(ServerConfig(root=str(root), port=0)).start()
    try:
        catalog = RestCatalog("lake", uri=server.url)
        catalog.create_namespace("ns")
        table = catalog.create_table(("ns", "t"), SCHEMA)
        yield server, Path(table.metadata_location.removeprefix("file://"))
    finally:
        server.stop()


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_metadata_file_is_500_naming_it(served, damage):
    server, metadata = served
    original = metadata.read_bytes()
    metadata.write_bytes(DAMAGE[damage](original))
    assert metadata.read_bytes() != original
    with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as client:
        load = client.get("/namespaces/ns/tables/t")
        commit = client.post(
            "/namespaces/ns/tables/t",
            json={"requirements": [], "updates": [{"action": "set-properties", "updates": {}}]},
        )
    for response in (load, commit):
        assert response.status_code == 500, response.text
        error = response.json()["error"]
        assert error["type"] == "InternalServerError"
        assert str(metadata) in error["message"] and "input_value" not in error["message"]


def test_registering_a_damaged_file_stays_a_bad_request(served):
    server, metadata = served
    metadata.write_bytes(b"[]")
    with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as client:
        response = client.post(
            "/namespaces/ns/register",
            json={"name": "again", "metadata-location": f"file://{metadata}"},
        )
    assert response.status_code == 400, response.text
