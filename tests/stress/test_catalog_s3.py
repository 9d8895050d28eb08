"""The catalog on S3: the catalog test suites re-run against the moto S3 server, plus
concurrency on s3:// and the capability probe seen from the catalog.

The catalog suites (namespaces, tables and views, transactions and isolation, versions,
time travel, rollback) are imported here unchanged; `make_lake` below makes their
lakehouses on S3 instead of in a local directory.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import uuid
from typing import Any

import fsspec
import pytest
from lake_fixtures import SMALL_TREE
from lakecheck import check_versions, read_state

# The catalog suites, collected again in this module (with this module's make_lake).
from test_catalog_namespaces import *  # noqa: F403
from test_catalog_objects import *  # noqa: F403
from test_storage_s3 import IgnoresConditionalWrites
from test_transactions import *  # noqa: F403
from test_versions import *  # noqa: F403

from trinityfs import Lakehouse
from trinityfs.errors import (
    CommitConflictError,
    LakehouseNotFoundError,
    UnsupportedStorageError,
)

pytestmark = [pytest.mark.stress, pytest.mark.s3]


@pytest.fixture
def make_lake(s3_bucket: str, s3_storage_options: dict[str, Any]):
    """Create a lakehouse under a fresh prefix of the moto S3 bucket."""

    def make(memory: bool = False, **options: Any) -> Lakehouse:
        url = f"s3://{s3_bucket}/catalog-{uuid.uuid4().hex}"
        return Lakehouse.create(url, storage_options=s3_storage_options, **options)

    return make


def test_lakehouses_here_are_on_s3(lake) -> None:
    assert lake.url.startswith("s3://")


# -- concurrency on s3:// -------------------------------------------------------------


def _writer(url: str, options: dict | None, worker: int, commits: int, out) -> None:
    lake = Lakehouse.open(url, storage_options=options)
    acked = []
    for i in range(commits):
        name = f"w{worker}c{i}"
        try:
            with lake.transaction() as txn:
                txn.create_table("ns", name)
                txn.replace_table("ns", "shared", {"properties": {"by": name}})
            acked.append((txn.txn.committed_version, name))
        except CommitConflictError:
            pass
    out.put((worker, acked))


def _check(lake: Lakehouse, acked: list[tuple[int, str]]) -> None:
    check_versions(lake)
    assert len({v for v, _ in acked}) == len(acked), "two commits acknowledged one version"
    tables = set(lake.list_tables("ns"))
    for version, name in acked:
        assert name in tables, f"acknowledged commit {name} (version {version}) lost"
        assert name in lake.at(version).list_tables("ns")
        assert name not in lake.at(version - 1).list_tables("ns")
        by = lake.at(version).describe_table("ns", "shared").properties["by"]
        assert by == name, f"version {version}: shared table not written by {name}"


def _shared_lake(make_lake) -> Lakehouse:
    lake = make_lake(**SMALL_TREE)
    lake.create_namespace("ns")
    lake.create_table("ns", "shared")
    return lake


def test_threads_on_s3(make_lake, s3_storage_options, figures) -> None:
    lake = _shared_lake(make_lake)
    out: queue.Queue = queue.Queue()
    threads = [
        threading.Thread(target=_writer, args=(lake.url, s3_storage_options, w, 8, out))
        for w in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    acked = [a for _ in threads for a in out.get()[1]]
    assert acked
    _check(Lakehouse.open(lake.url, storage_options=s3_storage_options), acked)
    figures(writers=4, attempts=32, acknowledged=len(acked))


def test_processes_on_s3(make_lake, s3_storage_options, figures) -> None:
    lake = _shared_lake(make_lake)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(lake.url, s3_storage_options, w, 8, out))
        for w in range(4)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    acked = [a for _, worker_acked in results for a in worker_acked]
    assert acked
    _check(Lakehouse.open(lake.url, storage_options=s3_storage_options), acked)
    figures(writers=4, attempts=32, acknowledged=len(acked))


def test_time_travel_and_rollback_survive_reopening(make_lake, s3_storage_options) -> None:
    lake = make_lake(**SMALL_TREE)
    lake.create_namespace("ns")
    states = {}
    for i in range(12):
        lake.create_table("ns", f"t{i}", {"properties": {"i": str(i)}})
        states[lake.latest_version()] = read_state(lake.snapshot())
    target = min(states) + 3
    rolled = lake.rollback(target)
    reopened = Lakehouse.open(lake.url, storage_options=s3_storage_options)
    assert reopened.version_info(rolled).rollback_from == rolled - 1
    assert read_state(reopened.at(rolled)) == states[target]
    for version, state in states.items():
        assert read_state(reopened.at(version)) == state
        created = reopened.version_info(version).created_at_millis
        assert reopened.version_at(created) == version
    check_versions(reopened)


# -- the capability probe, seen from the catalog ---------------------------------------


@pytest.fixture
def lax(s3_bucket: str) -> str:
    """A URL whose client drops If-None-Match: a store that ignores conditional writes."""
    fsspec.register_implementation("s3lax", IgnoresConditionalWrites, clobber=True)
    return f"s3lax://{s3_bucket}/catalog-{uuid.uuid4().hex}"


def test_creating_a_lakehouse_on_a_store_without_conditional_writes_is_refused(
    lax: str, s3_storage_options
) -> None:
    with pytest.raises(UnsupportedStorageError, match="ignores conditional writes"):
        Lakehouse.create(lax, storage_options=s3_storage_options)
    with pytest.raises(LakehouseNotFoundError):
        Lakehouse.open(lax, storage_options=s3_storage_options)


def test_committing_to_a_store_without_conditional_writes_is_refused(
    lax: str, s3_storage_options
) -> None:
    honest_url = lax.replace("s3lax://", "s3://", 1)
    honest = Lakehouse.create(honest_url, storage_options=s3_storage_options)
    honest.create_namespace("ns")
    through_lax = Lakehouse.open(lax, storage_options=s3_storage_options)
    assert through_lax.list_namespaces() == ["ns"]  # reading needs no conditional writes
    with pytest.raises(UnsupportedStorageError, match="If-None-Match"):
        through_lax.create_table("ns", "t")
    with pytest.raises(UnsupportedStorageError):  # remembered, refused again
        through_lax.create_table("ns", "t")
    assert check_versions(honest) == 1
    assert honest.list_tables("ns") == []
