"""A full export that took longer than the commit window (a tiny txn_ttl_millis, a slow
store) had its unrecorded `_exports/<name>/` files swept by an expiration running
meanwhile: it failed ("lost N of the N files it wrote ... nothing was exported"). A
partial export was worse: its private node copies, unreachable until the record landed,
were swept as old, and the export was recorded and acknowledged with nodes missing
(only its root was checked afterwards). A bulk load holds a lease for exactly that;
now full and partial exports hold one too (a distributed-transaction file with the
bulk-load prefix, renewed while they copy, removed when they end), so expiration keeps
their base version and spares every file written since the lease began."""

from __future__ import annotations

import time

import pytest

from trinityfs import Lakehouse
from trinityfs.lifecycle.exports import ExportProgress

TTL_MILLIS = 600  # the commit window: expiration's grace cannot go below it


def slow_lake(root: str, options: dict | None = None) -> Lakehouse:
    lake = Lakehouse.create(root, storage_options=options, txn_ttl_millis=TTL_MILLIS)
    lake.create_namespace("ns")
    for i in range(6):
        lake.create_table("ns", f"t{i}")
    return lake


def test_full_export_survives_an_expiration_while_it_copies(where) -> None:
    root, options = where
    lake = slow_lake(root, options)
    other = Lakehouse.open(root, storage_options=options)
    ran: list = []

    def progress(p: ExportProgress) -> None:
        if p.files_done == 3 and not ran:  # a slow copy: past the grace, then an expiration
            time.sleep(3 * TTL_MILLIS / 1000)
            ran.append(other.expire(max_age_millis=0, min_versions=1, grace_millis=0))

    info = lake.export("full1", mode="full", progress=progress)
    assert ran, "the expiration did not run during the export"
    assert info.standalone
    assert [e.name for e in lake.exports()] == ["full1"]
    exported = Lakehouse.open(root.rstrip("/") + "/_exports/full1", storage_options=options)
    assert sorted(exported.at().list_tables("ns")) == [f"t{i}" for i in range(6)]
    report = Lakehouse.open(root, storage_options=options).fsck()
    assert report.ok, report.errors
    assert not report.transactions, "the export's lease was left behind"


def test_the_lease_is_removed_when_the_export_fails(tmp_path) -> None:
    """Guard: a full export refused (the name exists) leaves no lease behind."""
    root = str(tmp_path / "lake")
    lake = slow_lake(root)
    lake.export("full1", mode="full")
    from trinityfs.errors import AlreadyExistsError

    with pytest.raises(AlreadyExistsError):
        lake.export("full1", mode="full")

    def boom(p: ExportProgress) -> None:
        if p.files_done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lake.export("full2", mode="full", progress=boom)
    report = lake.fsck()
    assert not report.transactions, report.transactions
    assert [e.name for e in lake.exports()] == ["full1"]


def test_partial_export_survives_an_expiration_while_it_copies(tmp_path) -> None:
    """A partial export's private node copies are unreachable until its record lands:
    swept as old by an expiration meanwhile, the export was recorded (and acknowledged)
    with nodes missing. It holds the same lease."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(
        root,
        txn_ttl_millis=TTL_MILLIS,
        order=4,
        namespace_name_max_size_bytes=16,
        table_name_max_size_bytes=16,
        view_name_max_size_bytes=16,
        node_file_max_size_bytes=4 * (16 + 16 + 204) + 2500,
    )
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"t{i:02d}")
    other = Lakehouse.open(root)
    ran: list = []

    def progress(p: ExportProgress) -> None:
        if p.phase == "nodes" and p.files_done == 1 and not ran:
            time.sleep(3 * TTL_MILLIS / 1000)
            ran.append(other.expire(max_age_millis=0, min_versions=1, grace_millis=0))

    info = lake.export("part", mode="partial", depth=3, progress=progress)
    assert ran and info.files_written > 2
    fresh = Lakehouse.open(root)  # not this process's node cache: the stored files
    assert len(list(fresh.at(export="part").list_tables("ns"))) == 40
    report = fresh.fsck()
    assert report.ok, report.errors
