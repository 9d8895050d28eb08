"""Two server processes on one lakehouse, with concurrent writers through both and a
direct TrinityCatalog writer: every acknowledged append is in the table exactly once,
and the table's history and the catalog's history agree (nothing lost, nothing doubled).
"""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException

from trinityfs import Lakehouse
from trinityfs.catalog import ObjectRef
from trinityfs.iceberg import TrinityCatalog

pytestmark = [pytest.mark.rest, pytest.mark.slow]

SCHEMA = pa.schema([("writer", pa.string()), ("seq", pa.int64())])
APPENDS = 4


def append_until_acknowledged(load, writer: str, seq: int, acked: list, errors: list) -> None:
    data = pa.table({"writer": [writer], "seq": [seq]}, schema=SCHEMA)
    for _ in range(50):  # a client's retry loop: reload and try again after a lost race
        try:
            load().append(data)
        except CommitFailedException:
            continue
        except Exception as exc:  # anything else is a failure of the test
            errors.append(f"{writer}/{seq}: {type(exc).__name__}: {exc}")
            return
        acked.append((writer, seq))
        return
    errors.append(f"{writer}/{seq}: never committed")


def test_concurrent_writers_through_two_servers_lose_nothing(start_server, lake_root):
    servers = [start_server(lake_root), start_server(lake_root)]
    setup = RestCatalog("setup", uri=servers[0].url)
    setup.create_namespace("sales")
    setup.create_table("sales.events", SCHEMA)
    start_version = Lakehouse.open(lake_root).latest_version()

    acked: list[tuple[str, int]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def writer(name: str, url: str | None) -> None:
        """Appends through a server at `url`, or straight to the lakehouse (None)."""
        cat = RestCatalog(name, uri=url) if url else TrinityCatalog(name, root=lake_root)
        mine: list = []
        for seq in range(APPENDS):
            append_until_acknowledged(
                lambda: cat.load_table("sales.events"), name, seq, mine, errors
            )
        with lock:
            acked.extend(mine)

    threads = [
        threading.Thread(target=writer, args=(f"a{i}", servers[0].url)) for i in range(2)
    ] + [threading.Thread(target=writer, args=(f"b{i}", servers[1].url)) for i in range(2)]
    threads.append(threading.Thread(target=writer, args=("direct", None)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert len(acked) == 5 * APPENDS

    # through either server, the table holds every acknowledged append exactly once
    for server in servers:
        table = RestCatalog("check", uri=server.url).load_table("sales.events")
        got = table.scan().to_arrow()
        assert sorted(
            zip(got["writer"].to_pylist(), got["seq"].to_pylist(), strict=True)
        ) == sorted(acked)

    # the Iceberg history is one chain of appends, one per acknowledged append
    table = TrinityCatalog("check", root=lake_root).load_table("sales.events")
    chain, snapshot = [], table.current_snapshot()
    while snapshot is not None:
        chain.append(snapshot)
        snapshot = (
            table.snapshot_by_id(snapshot.parent_snapshot_id)
            if snapshot.parent_snapshot_id
            else None
        )
    assert len(chain) == len(acked) == len(table.metadata.snapshots)
    assert all(s.summary.operation.value == "append" for s in chain)

    # and every one of them is its own catalog version that replaced the table
    lake = Lakehouse.open(lake_root)
    target = ObjectRef("sales", "events", "table")
    replaced = [
        v
        for v in range(start_version + 1, lake.latest_version() + 1)
        if any(c.object == target and c.action == "replaced" for c in lake.changes(v))
    ]
    assert len(replaced) == len(acked)
