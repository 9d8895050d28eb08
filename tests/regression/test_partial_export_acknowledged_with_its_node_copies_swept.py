"""Review R1 of 797df1f: a partial export whose node copies were swept before its record
landed was still recorded and acknowledged (only its root copy was checked afterwards),
and an export whose lease had lapsed went on as if it were held (only a log line). Now
every file an export wrote is checked after its record landed (a missing one: the record
is removed again, the export fails), the lease is renewed while the tree is read too,
and a lease that lapsed or vanished fails the export before its record is committed."""

from __future__ import annotations

import glob
import os
import time

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import NotFoundError, TransactionExpiredError
from trinityfs.lifecycle.exports import ExportProgress

SMALL_TREE = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 2500,
}


def deep_lake(root: str) -> Lakehouse:
    lake = Lakehouse.create(root, txn_ttl_millis=600, **SMALL_TREE)
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"t{i:02d}")
    return lake


def test_a_node_copy_gone_before_the_record_fails_the_export(tmp_path) -> None:
    root = str(tmp_path / "lake")
    lake = deep_lake(root)
    before = set(glob.glob(os.path.join(root, "*", "*", "*", "*-node-*.arrow")))
    removed: list[str] = []

    def progress(p: ExportProgress) -> None:
        if p.phase == "root" and not removed:  # every copy written, the root not yet
            copies = set(glob.glob(os.path.join(root, "*", "*", "*", "*-node-*.arrow")))
            removed.append(sorted(copies - before)[0])
            os.remove(removed[0])

    with pytest.raises(NotFoundError, match="its record was removed again"):
        lake.export("part", mode="partial", depth=3, progress=progress)
    assert removed
    assert lake.exports() == []


def test_a_lapsed_lease_fails_the_export_before_its_record(tmp_path, monkeypatch) -> None:
    import trinityfs.lifecycle.lease as lease_module

    monkeypatch.setattr(lease_module, "LEASE_MILLIS", 300)
    root = str(tmp_path / "lake")
    lake = deep_lake(root)
    other = Lakehouse.open(root)
    ran: list = []

    def progress(p: ExportProgress) -> None:
        if p.phase == "nodes" and p.files_done == 1 and not ran:
            time.sleep(1.5)  # stopped past the lease's TTL and the grace
            ran.append(other.expire(max_age_millis=0, min_versions=1, grace_millis=0))

    with pytest.raises(TransactionExpiredError, match="lapsed"):
        lake.export("part", mode="partial", depth=3, progress=progress)
    assert ran
    fresh = Lakehouse.open(root)
    assert fresh.exports() == []
    assert fresh.fsck().ok


def test_an_exporter_whose_clock_runs_ahead_of_the_store(tmp_path, monkeypatch) -> None:
    """Review R12: the lease's start was the exporter's clock, compared with store mtimes:
    90 s ahead, it spared nothing the export wrote first, and a slow partial export was
    acknowledged unreadable. The lease now starts at the store's time of its file."""
    import trinityfs.lifecycle.dtxn as dtxn

    root = str(tmp_path / "lake")
    lake = deep_lake(root)
    other = Lakehouse.open(root)
    real = dtxn.now_millis
    monkeypatch.setattr(dtxn, "now_millis", lambda: real() + 90_000)  # where leases begin
    ran: list = []

    def progress(p: ExportProgress) -> None:
        if p.phase == "nodes" and p.files_done == 1 and not ran:
            time.sleep(1.8)  # slower than the commit window
            ran.append(other.expire(max_age_millis=0, min_versions=1, grace_millis=0))

    lake.export("part", mode="partial", depth=3, progress=progress)
    assert ran
    fresh = Lakehouse.open(root)
    assert len(list(fresh.at(export="part").list_tables("ns"))) == 40
    assert fresh.fsck().ok
