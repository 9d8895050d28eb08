"""Expiration on a store that refuses writes (read-only credentials) failed at the clock
probe (`Storage.clock_ahead_millis` writes a file) even when nothing was to be deleted,
with "probe of '.trinityfs-probe-...' failed: PermissionError". Moving the cutoff back
only keeps more, so expiration now decides by this clock first and probes the store only
when that would delete something; then a refused probe says that expiration must write
one, and nothing changes. An absent oldest marker (read as 0) is no longer written as "0".

Real refusals: the lakehouse directory is made read-only and the command runs without
the capability to override file modes (as root: `setpriv --bounding-set=-dac_override`).
"""

from __future__ import annotations

import importlib
import os
import stat
import time
from pathlib import Path

import pytest
from regression_cli import unprivileged_process

import trinityfs.storage.core as storage_core
from trinityfs import Lakehouse
from trinityfs.format.definitions import encode_definition
from trinityfs.format.paths import new_definition_location
from trinityfs.format.trinitylake_pb2 import TableDef

TTL = 1000  # grace floor 1 s: versions are old enough after a short sleep


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _listing(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


@pytest.fixture
def lake_dir(tmp_path):
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root), storage_options={"fsync": False}, txn_ttl_millis=TTL)
    for name in ("a", "b", "c"):
        lake.create_namespace(name)
    yield root
    _writable(root)


def test_nothing_to_delete_on_a_read_only_store_succeeds(lake_dir) -> None:
    _read_only(lake_dir)
    before = _listing(lake_dir)
    for args in (["expire"], ["expire", "--max-age", "7d", "--min-versions", "1"]):
        done = unprivileged_process(lake_dir, "--json", *args)
        assert done.returncode == 0, done.stderr
        assert '"files_removed": 0' in done.stdout
        assert done.stderr == ""
    assert _listing(lake_dir) == before


def test_a_needed_probe_refused_is_said_and_nothing_changes(lake_dir) -> None:
    time.sleep(2 * TTL / 1000)  # every version older than the grace floor and margin
    _read_only(lake_dir)
    before = _listing(lake_dir)
    done = unprivileged_process(
        lake_dir, "expire", "--max-age", "0", "--min-versions", "1", "--grace", "0"
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "expiration would delete 3 root(s)" in lines[0]
    assert "probe file" in lines[0] and "refused" in lines[0]
    assert str(lake_dir) in lines[0]
    assert _listing(lake_dir) == before
    # the dry run still writes nothing and says what a run would remove
    dry = unprivileged_process(
        lake_dir, "expire", "--max-age", "0", "--min-versions", "1", "--dry-run"
    )
    assert dry.returncode == 0, dry.stderr
    assert "versions 0..2 would expire" in dry.stdout
    assert _listing(lake_dir) == before


def test_no_probe_request_when_nothing_is_deleted(lake_dir) -> None:
    lake = Lakehouse.open(str(lake_dir), storage_options={"fsync": False})
    report = lake.expire()
    assert report.files_removed == 0
    assert report.requests.get("probe", 0) == 0
    assert report.requests.get("write", 0) == 0
    time.sleep(2 * TTL / 1000)
    report = lake.expire(max_age_millis=0, min_versions=1)
    assert report.roots_removed == 3
    assert report.requests.get("probe", 0) == 3  # written, its mtime read, deleted
    assert lake.fsck().ok


def _orphan(lake: Lakehouse, name: str, age_seconds: float) -> str:
    """A definition file no root refers to (a crashed commit's), `age_seconds` old."""
    data = encode_definition(TableDef(id=name, table_format="ICEBERG"))
    location = new_definition_location("table", "ns", name, data)
    lake.storage.write_immutable(location, data)
    path = Path(lake.url.removeprefix("file://")) / location
    then = time.time() - age_seconds
    os.utime(path, (then, then))
    return location


def test_only_files_to_sweep_a_refused_probe_is_said(lake_dir) -> None:
    lake = Lakehouse.open(str(lake_dir), storage_options={"fsync": False})
    _orphan(lake, "old", 3600)
    _read_only(lake_dir)
    before = _listing(lake_dir)
    done = unprivileged_process(lake_dir, "expire")  # every version kept: only the orphan would go
    assert done.returncode == 1
    assert "expiration would delete 1 file(s)" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert _listing(lake_dir) == before


def test_only_files_to_sweep_a_clock_ahead_spares_young_ones(lake_dir, monkeypatch) -> None:
    """A guard (passes on 78274d0 too): with no root to delete the probe comes after
    marking, and its measure still moves the sweep's cutoff back."""
    lake = Lakehouse.open(str(lake_dir), storage_options={"fsync": False})
    old = _orphan(lake, "old", 3600)
    young = _orphan(lake, "in-flight", 0)
    expire_module = importlib.import_module("trinityfs.lifecycle.expire")
    real_now, real_time = expire_module.now_millis, time.time
    monkeypatch.setattr(expire_module, "now_millis", lambda: real_now() + 120_000)
    monkeypatch.setattr(storage_core.time, "time", lambda: real_time() + 120)
    report = lake.expire()
    removed = {f.location for f in report.removed}
    assert old in removed and young not in removed
    assert report.roots_removed == 0
    assert lake.storage.exists(young) and not lake.storage.exists(old)
