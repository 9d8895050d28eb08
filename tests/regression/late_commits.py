"""Shared setup of the late-commit regression tests (a writer paused past the commit
window while an expiration sweeps): a small lakehouse, and the writer's clocks jumping
forward once it "paused"."""

from __future__ import annotations

import time
from types import ModuleType

import pytest

from trinityfs import Lakehouse

PAUSE_MS = 10 * 60_000  # how long the writer "pauses": far past the commit window


def small_lake(tmp_path, tables: int = 5) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(tables):
        lake.create_table("ns", f"t{i}", {"properties": {"i": str(i)}})
    return lake


def jumping_clocks(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> dict[str, int]:
    """`module`'s wall clock (now_millis) and monotonic clock run `jump["ms"]` ahead once
    a test sets it (its `time.sleep` stays real)."""
    jump = {"ms": 0}
    real_now = module.now_millis

    class _Time:
        sleep = staticmethod(time.sleep)

        @staticmethod
        def monotonic() -> float:
            return time.monotonic() + jump["ms"] / 1000

    monkeypatch.setattr(module, "now_millis", lambda: real_now() + jump["ms"])
    monkeypatch.setattr(module, "time", _Time)
    return jump


def assert_whole(lake: Lakehouse, version: int) -> None:
    """A fresh handle reads `version` as latest, the late table and every table, and
    fsck finds nothing."""
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert fresh.describe_table("ns", "late").properties["k"] == "v"
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    report = fresh.fsck()
    assert report.ok, report.errors[:3]
