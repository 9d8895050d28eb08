"""Threads and separate processes committing to one local lakehouse: every acknowledged
commit is present at the end and the versions are dense."""

from __future__ import annotations

import multiprocessing
import threading

import pytest
from lake_fixtures import SMALL_TREE

from trinityfs import Lakehouse
from trinityfs.errors import CommitConflictError


def _writer(url: str, worker: int, commits: int, shared: bool, out) -> None:
    lake = Lakehouse.open(url)
    acked = []
    for i in range(commits):
        name = f"w{worker}c{i}"
        try:
            with lake.transaction() as txn:
                txn.create_table("ns", name)
                if shared:  # everyone also replaces one shared table: real conflicts
                    txn.replace_table("ns", "shared", {"properties": {"by": name}})
            acked.append((txn.txn.committed_version, name))
        except CommitConflictError:
            pass
    out.put((worker, acked))


def _check_history(lake: Lakehouse, acked: list[tuple[int, str]]) -> None:
    latest = lake.latest_version()
    versions = [v.version for v in lake.versions()]
    assert versions == list(range(0, latest + 1)), "versions are not dense"
    assert len({v for v, _ in acked}) == len(acked), "two commits acknowledged one version"
    tables = set(lake.list_tables("ns"))
    for version, name in acked:
        assert name in tables, f"acknowledged commit {name} (version {version}) lost"
        assert name in lake.at(version).list_tables("ns")
        assert name not in lake.at(version - 1).list_tables("ns")
    lake.check()


@pytest.mark.parametrize("shared", [False, True], ids=["disjoint", "overlapping"])
def test_threads(make_lake, shared: bool) -> None:
    lake = make_lake(**SMALL_TREE)
    lake.create_namespace("ns")
    lake.create_table("ns", "shared")
    import queue

    out: queue.Queue = queue.Queue()
    threads = [
        threading.Thread(target=_writer, args=(lake.url, w, 15, shared, out)) for w in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked = [a for _ in threads for a in out.get()[1]]
    if not shared:
        assert len(acked) == 6 * 15
    _check_history(lake, acked)


@pytest.mark.parametrize("shared", [False, True], ids=["disjoint", "overlapping"])
def test_processes(make_lake, shared: bool) -> None:
    lake = make_lake(**SMALL_TREE)
    lake.create_namespace("ns")
    lake.create_table("ns", "shared")
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(lake.url, w, 12, shared, out)) for w in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    acked = [a for _, worker_acked in results for a in worker_acked]
    if not shared:
        assert len(acked) == 4 * 12
    else:
        assert acked, "no commit at all succeeded"
    _check_history(lake, acked)
