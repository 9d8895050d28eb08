"""A bulk load's lease holds expiration back by its start, began_at_millis, which
expiration compares with store mtimes. It was the loading process's clock: a loader
90 s ahead of the store (beyond the 60 s allowance) had the definition files it wrote
first swept by a concurrent expiration while the lease was live, and the load was
then committed and acknowledged with tables that do not read (StorageFileNotFoundError,
fsck errors). The same fix as exports' (review R12 of 797df1f): the lease's start is
lowered to the store's time of its file (`lifecycle.lease.started_on_the_store_clock`).
"""

from __future__ import annotations

import time

import trinityfs.catalog.bulk as bulk
import trinityfs.lifecycle.dtxn as dtxn
from trinityfs import Lakehouse


def test_a_loader_ahead_of_the_store_keeps_its_files(tmp_path, monkeypatch) -> None:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, txn_ttl_millis=600, storage_options={"fsync": False})
    lake.create_namespace("ns")
    other = Lakehouse.open(root, storage_options={"fsync": False})
    real = dtxn.now_millis
    monkeypatch.setattr(dtxn, "now_millis", lambda: real() + 90_000)  # where leases begin
    monkeypatch.setattr(bulk, "FILE_BATCH", 8)  # files are written while staging
    load = lake.bulk_load()
    for i in range(40):
        load.create_table("ns", f"b{i:02d}")
    time.sleep(1.8)  # older than the commit window (txn_ttl 600 ms)
    other.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    version = load.commit()
    fresh = Lakehouse.open(root)
    assert fresh.latest_version() == version
    assert len(fresh.list_tables("ns")) == 40
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    assert fresh.fsck().ok
