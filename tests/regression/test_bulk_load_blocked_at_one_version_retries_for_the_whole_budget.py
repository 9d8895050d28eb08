"""A bulk load whose create of root v+1 "loses" while the latest version stays v retried
for the whole commit budget (120 s) and then raised CommitRetriesExhaustedError naming
no file: b39e49e bounded that case for commits and rollbacks only (helper edges'
report). Now the load fails the same way after BLOCKED_LOSSES_MAX such losses, with
RootBlockedError naming the root file; nothing is committed and the load's definition
files are removed."""

from __future__ import annotations

import os

import pytest
from test_lost_race_at_the_same_version_retries_without_backoff import (
    EXPECTED_MAX,
    LyingCreates,
)

import trinityfs.txn.backoff as backoff
from trinityfs import Lakehouse
from trinityfs.errors import CommitRetriesExhaustedError
from trinityfs.format.paths import root_node_file


def test_a_bulk_load_blocked_at_one_version_fails_naming_the_root(tmp_path, monkeypatch):
    monkeypatch.setattr(backoff, "COMMIT_BUDGET_SECONDS", 3.0)  # the old loop: 3 s, not 120
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    before = lake.latest_version()
    lies = LyingCreates(monkeypatch, root_node_file(before + 1))
    with pytest.raises(CommitRetriesExhaustedError) as info, lake.bulk_load() as load:
        for i in range(5):
            load.create_table("ns", f"t{i}")
    assert lies.lies <= EXPECTED_MAX, f"{lies.lies} creates of one root"
    assert type(info.value).__name__ == "RootBlockedError"
    assert root_node_file(before + 1) in str(info.value)
    monkeypatch.undo()
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == before
    assert fresh.list_tables("ns") == []
    left = [f for _d, _s, files in os.walk(tmp_path / "lake") for f in files if "table-ns-t" in f]
    assert left == []  # the load's definition files were removed
    assert lake.create_table("ns", "after") == before + 1
