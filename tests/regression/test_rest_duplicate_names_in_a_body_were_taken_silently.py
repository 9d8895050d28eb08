"""A REST request body naming a key twice in one object was accepted, the last value
winning: `{"namespace": ["d1"], "namespace": ["d2"]}` created d2. Parsers disagree on
duplicates (Python's and Jackson's keep the last, others the first), so a proxy or audit
log that reads one value and this server that acts on the other see different requests.
Now a name twice in one object, at any depth, is 400 BadRequestException naming it, and
nothing is written."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest


@pytest.mark.parametrize(
    "body",
    [
        b'{"namespace": ["d1"], "namespace": ["d2"]}',
        b'{"namespace": ["d3"], "properties": {"owner": "a", "owner": "b"}}',
    ],
)
def test_a_name_twice_in_one_object(tmp_path, body):
    root = str(tmp_path / "lake")
    Lakehouse.create(root)
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            r = http.post(
                "/v1/latest/namespaces", content=body, headers={"content-type": "application/json"}
            )
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["type"] == "BadRequestException" and "twice" in error["message"]
        assert Lakehouse.open(root).list_namespaces() == []
    finally:
        server.stop()
