"""A REST multi-table transaction (POST /v1/{prefix}/transactions/commit) refused with
409 (one table's requirement failed, or a concurrent commit) deleted, on its way out, the
files the other changes' new snapshots added: the data files, manifests and manifest
lists the CLIENT had written. Nothing was committed, so the client may commit the same
changes again (one table at a time, or after fixing the failed requirement); that commit
was acknowledged (200) and left a table whose current snapshot names deleted files:
every scan failed with FileNotFoundError.

Now the server removes only the metadata files it wrote itself; the client's files stay
until the client (or `reclaim_files`) removes them. The in-process
`TrinityCatalog.multi_table_transaction()` still removes the files its own commits wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from pydantic import TypeAdapter  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.table.update import TableRequirement, TableUpdate  # noqa: E402

from tests.regression.iceberg_helpers import files_under, make_lake  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402

SCHEMA = pa.schema([("a", pa.int64())])


def as_json(adapter_type, values) -> list:
    return json.loads(TypeAdapter(adapter_type).dump_json(values, by_alias=True))


@pytest.mark.parametrize("why", ["requirement", "bad update"])
def test_a_refused_transaction_leaves_the_clients_files(tmp_path: Path, why: str) -> None:
    root = make_lake(tmp_path / "lake")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        catalog = RestCatalog("c", uri=server.url)
        table = catalog.create_table("ns.u", SCHEMA)
        catalog.create_table("ns.t", SCHEMA)
        staged = table.transaction()
        staged.append(pa.table({"a": [1, 2, 3]}, schema=SCHEMA))  # the client writes files
        change = {
            "identifier": {"namespace": ["ns"], "name": "u"},
            "requirements": as_json(tuple[TableRequirement, ...], staged._requirements),
            "updates": as_json(tuple[TableUpdate, ...], staged._updates),
        }
        written = files_under(tmp_path / "lake" / "warehouse" / "ns" / "u")
        failing = {
            "identifier": {"namespace": ["ns"], "name": "t"},
            "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7}],
            "updates": [],
        }
        if why == "bad update":  # refused while staged (400), after u's change was staged
            failing["requirements"] = []
            failing["updates"] = [{"action": "set-current-schema", "schema-id": 99}]
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=30) as http:
            got = http.post("/transactions/commit", json={"table-changes": [change, failing]})
            assert got.status_code in (400, 409), got.text
            assert files_under(tmp_path / "lake" / "warehouse" / "ns" / "u") == written
            # nothing was committed: the client commits the same change on its own
            got = http.post("/namespaces/ns/tables/u", json=change)
            assert got.status_code == 200, got.text
        assert catalog.load_table("ns.u").scan().to_arrow()["a"].to_pylist() == [1, 2, 3]
    finally:
        server.stop()
