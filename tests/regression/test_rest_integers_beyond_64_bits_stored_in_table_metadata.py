"""A REST request body could carry integers no Iceberg field holds (a 4,000-digit
`schema-id`, a field id of 2^70): the table was created and its metadata file stored
them, unreadable to Java clients; 5,000 digits was a 400 quoting Python's int
conversion limit. Now any integer outside the 64-bit range is 400 BadRequestException
at parsing, and nothing is written; so are NaN, Infinity (not JSON) and a float beyond a
double, which every field taking numbers refused already."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest

FIELD = b'{"id": 1, "name": "a", "type": "long", "required": false}'


@pytest.mark.parametrize(
    ("schema_id", "field_id"),
    [
        (b"9" * 4000, b"1"),
        (b"9" * 5000, b"1"),
        (b"0", str(2**70).encode()),
        (b"0", str(-(2**63) - 1).encode()),
    ],
)
def test_numbers_no_iceberg_field_holds(tmp_path, schema_id, field_id):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    body = (
        b'{"name": "t", "schema": {"type": "struct", "schema-id": '
        + schema_id
        + b', "fields": ['
        + FIELD.replace(b'"id": 1', b'"id": ' + field_id)
        + b"]}}"
    )
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            r = http.post(
                "/v1/latest/namespaces/ns/tables",
                content=body,
                headers={"content-type": "application/json"},
            )
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["type"] == "BadRequestException" and "int_max_str" not in error["message"]
        assert Lakehouse.open(root).list_tables("ns") == []
        assert not os.path.exists(os.path.join(root, "warehouse", "ns", "t"))
    finally:
        server.stop()
