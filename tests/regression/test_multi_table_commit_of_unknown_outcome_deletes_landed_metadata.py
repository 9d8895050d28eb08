"""A multi-table transaction whose commit raised with its outcome unknown
(AmbiguousWriteError: the catalog root was written, reading it back failed) removed
every file its staged commits wrote, the new metadata files included. The commit had
landed: every table of it pointed at a removed metadata file and could no longer be
loaded (StorageFileNotFoundError), through `TrinityCatalog.multi_table_transaction()`
and through REST POST /transactions/commit (answered 500 CommitStateUnknownException).

Now files are removed only when the commit is known not to have landed (a conflict, a
refused change): after an unknown outcome, or an interrupt, they stay. The storage
answers the root write ambiguously, as tests/regression/test_ambiguous_commit_applied_twice.py
does."""

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

from tests.regression.iceberg_helpers import make_lake  # noqa: E402
from trinityfs.errors import AmbiguousWriteError, StorageError  # noqa: E402
from trinityfs.format.paths import parse_root_node_file  # noqa: E402
from trinityfs.iceberg import TrinityCatalog  # noqa: E402
from trinityfs.rest.server import ServerConfig, ServerThread  # noqa: E402
from trinityfs.storage import Storage  # noqa: E402

SCHEMA = pa.schema([("a", pa.int64())])


def land_ambiguously(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next root written lands but answers AmbiguousWriteError; reading it back
    fails until the patch is undone."""
    real_create, real_read = Storage.create_if_absent, Storage.read
    state: dict = {"armed": True, "root": None}

    def create(self, loc, data, **kwargs):
        if state["armed"] and parse_root_node_file(loc) is not None:
            state["armed"], state["root"] = False, loc
            real_create(self, loc, data, **kwargs)
            raise AmbiguousWriteError(f"injected: outcome of {loc} unknown")
        return real_create(self, loc, data, **kwargs)

    def read(self, loc):
        if loc == state["root"]:
            raise StorageError(f"injected: read of {loc} failed")
        return real_read(self, loc)

    monkeypatch.setattr(Storage, "create_if_absent", create)
    monkeypatch.setattr(Storage, "read", read)


def rows(root: str) -> dict[str, list[int]]:
    catalog = TrinityCatalog("check", root=root)
    return {n: catalog.load_table(f"ns.{n}").scan().to_arrow()["a"].to_pylist() for n in "tu"}


def test_in_process_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_lake(tmp_path / "lake")
    catalog = TrinityCatalog("c", root=root)
    catalog.create_table("ns.t", SCHEMA)
    catalog.create_table("ns.u", SCHEMA)
    mt = catalog.multi_table_transaction()
    mt.load_table("ns.t").append(pa.table({"a": [1]}, schema=SCHEMA))
    mt.load_table("ns.u").append(pa.table({"a": [2]}, schema=SCHEMA))
    land_ambiguously(monkeypatch)
    with pytest.raises(AmbiguousWriteError):
        mt.commit()
    monkeypatch.undo()
    assert rows(root) == {"t": [1], "u": [2]}


def test_rest_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_lake(tmp_path / "lake")
    server = ServerThread(ServerConfig(root=root, port=0)).start()
    try:
        catalog = RestCatalog("c", uri=server.url)
        changes = []
        for name, value in (("t", 1), ("u", 2)):
            staged = catalog.create_table(f"ns.{name}", SCHEMA).transaction()
            staged.append(pa.table({"a": [value]}, schema=SCHEMA))
            changes.append(
                {
                    "identifier": {"namespace": ["ns"], "name": name},
                    "requirements": json.loads(
                        TypeAdapter(tuple[TableRequirement, ...]).dump_json(
                            staged._requirements, by_alias=True
                        )
                    ),
                    "updates": json.loads(
                        TypeAdapter(tuple[TableUpdate, ...]).dump_json(
                            staged._updates, by_alias=True
                        )
                    ),
                }
            )
        land_ambiguously(monkeypatch)
        with httpx.Client(base_url=f"{server.url}/v1/latest", timeout=60) as http:
            got = http.post("/transactions/commit", json={"table-changes": changes})
        assert got.status_code == 500, got.text
        assert got.json()["error"]["type"] == "CommitStateUnknownException"
        monkeypatch.undo()
        assert rows(root) == {"t": [1], "u": [2]}
    finally:
        monkeypatch.undo()
        server.stop()
