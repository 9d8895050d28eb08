"""REST URL prefixes had more than one spelling per catalog version: `/v1/v/01/...`,
`/v1/v/0001/...` and `/v1/v/00/...` read versions 1 and 0, and a prefix with spaces
around it (`latest%20`, `%20latest`, `v/1%20`) was stripped, so `POST
/v1/latest%20/namespaces` wrote to the latest version. The fs/FUSE/CLI paths have one
spelling per name (`/v/01` is ENOENT). A 5,000-digit prefix was a 400 quoting Python's
int conversion limit. Now a version number in a prefix has one spelling and a prefix
has no spaces around it: another spelling is 404 NoSuchWarehouseException naming the
one spelling, and nothing is written (exports and times stay selectors, as in
`/v/<selector>` paths). (`v/%31` is the same URL as `v/1`, RFC 3986 6.2.2.2; `warehouse=v/01` at
GET /v1/config still answers the one prefix `v/1`. PyIceberg and DuckDB take the
prefix from the config endpoint's override, so only raw HTTP can send another one.)"""

from __future__ import annotations

from urllib.parse import unquote

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

pytestmark = pytest.mark.rest


@pytest.fixture
def server(tmp_path):
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")  # version 1
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    yield server
    server.stop()


def _error(response: httpx.Response) -> dict:
    assert response.status_code == 404, response.text
    error = response.json()["error"]
    assert error["type"] == "NoSuchWarehouseException" and error["code"] == 404
    return error


@pytest.mark.parametrize(
    ("prefix", "canonical"),
    [
        ("v/01", "v/1"),
        ("v/0001", "v/1"),
        ("v/00", "v/0"),
        ("v/1%20", "v/1"),
        ("%20latest", "latest"),
        ("latest%20", "latest"),
    ],
)
def test_only_the_one_spelling_of_a_prefix_names_a_version(server, prefix, canonical):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get(f"/v1/{canonical}/namespaces").status_code == 200
        error = _error(http.get(f"/v1/{prefix}/namespaces"))
        assert repr(canonical) in error["message"]
        _error(http.post(f"/v1/{prefix}/namespaces", json={"namespace": ["made"]}))
        assert http.head("/v1/latest/namespaces/made").status_code == 404
        # a warehouse (GET /v1/config) is read leniently and answered with the one prefix
        config = http.get("/v1/config", params={"warehouse": unquote(prefix)})
        assert config.json()["overrides"]["prefix"] == canonical


def test_a_huge_version_prefix_is_no_such_warehouse(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for prefix in ("v/" + "9" * 5000, "v/18446744073709551616"):
            assert "int" not in _error(http.get(f"/v1/{prefix}/namespaces"))["message"]
