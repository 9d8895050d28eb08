"""The freshness policy for "latest" on Lakehouse (opt-in staleness bound)."""

from __future__ import annotations

import pytest

from trinityfs.catalog import Freshness, Lakehouse
from trinityfs.errors import InvalidArgumentError


class Counting:
    def __init__(self, lake: Lakehouse):
        self.calls = 0
        real = lake.engine.roots.latest_version

        def counted() -> int:
            self.calls += 1
            return real()

        lake.engine.roots.latest_version = counted  # type: ignore[method-assign]


def test_default_asks_storage_every_time(lake):
    reader = Lakehouse.open(lake.url)
    probes = Counting(reader)
    for _ in range(3):
        reader.latest_version()
    assert probes.calls == 3


def test_within_the_bound_latest_costs_no_storage_request(lake):
    reader = Lakehouse.open(lake.url, freshness=Freshness(max_staleness_seconds=3600))
    probes = Counting(reader)
    assert reader.latest_version() == 0 and reader.snapshot().version == 0
    lake.create_namespace("ns")  # another process commits
    assert reader.latest_version() == 0  # stale by choice, within the bound
    assert probes.calls == 0
    assert reader.latest_version(fresh=True) == 1 and probes.calls == 1
    assert reader.resolve("latest").version == 1


def test_own_commits_are_seen_within_the_bound(lake):
    writer = Lakehouse.open(lake.url, freshness=Freshness(max_staleness_seconds=3600))
    assert writer.latest_version() == 0
    assert writer.create_namespace("ns") == 1
    assert writer.latest_version() == 1 and writer.list_namespaces() == ["ns"]


def test_the_bound_expires(lake):
    clock = [0.0]
    reader = Lakehouse.open(lake.url, freshness=Freshness(max_staleness_seconds=2))
    reader._latest._clock = lambda: clock[0]
    reader.latest_version(fresh=True)
    lake.create_namespace("ns")
    clock[0] = 1.5
    assert reader.latest_version() == 0
    clock[0] = 2.5
    assert reader.latest_version() == 1


@pytest.mark.parametrize("bad", [-1, float("nan"), "1", True])
def test_bad_bounds(bad):
    with pytest.raises(InvalidArgumentError):
        Freshness(max_staleness_seconds=bad)
