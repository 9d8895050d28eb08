"""A deterministic single-writer workload whose commits flush, split, merge and roll back.

The crash and fault suites run it step by step: each step is exactly one commit, so
step i (0-based) of a run that started at version B makes version B + i + 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from trinityfs import Lakehouse
from trinityfs.storage import Storage

# Small nodes (order 4, tiny buffers): the steps below flush and split on most commits.
LAKE_OPTIONS = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 600,
}
# SIGKILL keeps the page cache: fsync only matters for power loss, and os.sync() per
# batch would make hundreds of runs slow. The sync step is still counted and faulted.
STORAGE_OPTIONS = {"fsync": False}


def props(**values: str) -> dict[str, Any]:
    return {"properties": values}


def setup(lake: Lakehouse) -> int:
    """The starting lakehouse: two namespaces, eleven tables, a tree of depth >= 2."""
    with lake.transaction() as t:
        t.create_namespace("a", {"owner": "setup"})
        t.create_namespace("b")
        for i in range(8):
            t.create_table("a", f"t{i}", props(gen="0"))
    for i in range(3):
        lake.create_table("b", f"s{i}", props(gen="0"))
    return lake.latest_version()


def _bulk_create(lake: Lakehouse) -> None:
    with lake.transaction() as t:  # many keys in one commit: splits
        for i in range(6):
            t.create_table("b", f"b{i}", props(gen="1"))


def _bulk_drop(lake: Lakehouse) -> None:
    with lake.transaction() as t:  # many deletes: merges and redistribution
        for i in range(4):
            t.drop_table("b", f"b{i}")
        t.drop_table("a", "t0")


def _mixed(lake: Lakehouse) -> None:
    with lake.transaction() as t:
        for i in range(5):
            t.create_table("a", f"c{i}", props(gen="9"))
        t.drop_table("a", "t5")
        t.replace_table("a", "t6", props(gen="9"))


STEPS: list[tuple[str, Callable[[Lakehouse], Any]]] = [
    ("create table", lambda lake: lake.create_table("a", "n1", props(gen="1"))),
    ("create 6 tables", _bulk_create),
    ("replace table", lambda lake: lake.replace_table("a", "t3", props(gen="2"))),
    ("drop 5 tables", _bulk_drop),
    ("rename table", lambda lake: lake.rename_table("a", "t1", "b", "t1r")),
    ("namespace properties", lambda lake: lake.set_namespace_properties("a", {"k": "v"})),
    ("create view", lambda lake: lake.create_view("b", "v1", props(sql="select 1"))),
    ("rollback", lambda lake: lake.rollback(lake.latest_version() - 5)),
    ("create 5, drop, replace", _mixed),
]


Steps = Sequence[tuple[str, Callable[[Lakehouse], Any]]]


def run_steps(lake: Lakehouse, ack_path: str | None = None, steps: Steps = STEPS) -> None:
    """Run every step; after each acknowledged commit append its index to `ack_path`."""
    fd = None if ack_path is None else os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    for i, (_name, step) in enumerate(steps):
        step(lake)
        if fd is not None:
            os.write(fd, f"{i}\n".encode())


def crash_child(
    url: str,
    kind: str,
    at: int,
    ack_path: str,
    run: Callable[[Lakehouse, str], None] = run_steps,
) -> None:
    """Entry point of a crash run: `run` (this workload's steps by default) with SIGKILL
    at counted operation `at`."""
    from faults import Plan, inject

    storage = Storage(url, STORAGE_OPTIONS)
    inject(storage, Plan(kind=kind, at=at))
    run(Lakehouse(storage), ack_path)


def create_child(url: str, kind: str, at: int, ack_path: str) -> None:
    """Entry point of a crash run during Lakehouse.create."""
    from faults import Plan, every_storage_faulty

    with every_storage_faulty(Plan(kind=kind, at=at)):
        Lakehouse.create(url, storage_options=STORAGE_OPTIONS, **LAKE_OPTIONS)
    fd = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, b"created\n")


def warm_up() -> None:
    """Run the workload once in a throw-away directory.

    Preloaded into the fork server of the crash suite, so that every forked child starts
    with lazy imports done and compiled patterns cached, and its run takes milliseconds.
    """
    import shutil
    import tempfile

    from faults import Plan, inject

    directory = tempfile.mkdtemp(prefix="trinityfs-warm-")
    try:
        storage = Storage(os.path.join(directory, "lake"), STORAGE_OPTIONS)
        lake = Lakehouse.create(storage.url, storage_options=STORAGE_OPTIONS, **LAKE_OPTIONS)
        setup(lake)
        storage = Storage(lake.url, STORAGE_OPTIONS)
        inject(storage, Plan(trace=True))
        run_steps(Lakehouse(storage))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
