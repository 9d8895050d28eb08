"""Catalog primitives: `last_changed` (bisection) against the linear walk it replaces,
and the rendered-JSON cache against rendering on every read. Interleaved, same lakehouse.

    PYTHONPATH=$PWD python benchmarks/bench_catalog.py [--versions 500] [--rounds 3]

Prints medians and machine-independent counts (versions probed, definitions rendered).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from trinityfs.catalog import Lakehouse, ObjectRef
from trinityfs.catalog.content import render


def linear_last_changed(lake: Lakehouse, ns: str, name: str) -> tuple[int, int]:
    """The walk iceberg's table_version() did: changes() of each version, newest first."""
    target = ObjectRef(ns, name, "table")
    version, oldest, probed = lake.latest_version(), lake.oldest_version(), 0
    while version > oldest:
        probed += 1
        if any(c.object == target for c in lake.changes(version)):
            return version, probed
        version -= 1
    return oldest, probed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--versions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lakehouse.create(tmp + "/lake")
        lake.create_namespace("ns")
        lake.create_table("ns", "t", {"properties": {"k": "v"}})  # version 2, then untouched
        with lake.transaction() as txn:
            for i in range(50):
                txn.create_table("ns", f"o{i}")
        for i in range(args.versions - lake.latest_version() - 1):
            lake.set_namespace_properties("ns", {"i": str(i)})
        versions = lake.latest_version() + 1
        bisect_t, linear_t = [], []
        probes = []
        real = lake.location_at

        def counting(v: int, k: str) -> str | None:
            probes.append(v)
            return real(v, k)

        lake.location_at = counting  # type: ignore[method-assign]
        for _ in range(args.rounds):
            probes.clear()
            t0 = time.perf_counter()
            found = lake.last_changed("ns", "t").version
            bisect_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            walked, walked_probes = linear_last_changed(lake, "ns", "t")
            linear_t.append(time.perf_counter() - t0)
            assert found == walked == 2, (found, walked)
        print(f"versions: {versions}")
        print(
            f"last_changed bisection: {statistics.median(bisect_t) * 1e3:.2f} ms, "
            f"{len(probes)} versions probed"
        )
        print(
            f"linear walk (old iceberg table_version): {statistics.median(linear_t) * 1e3:.2f} ms, "
            f"{walked_probes} versions probed"
        )
        print(f"speed-up: {statistics.median(linear_t) / statistics.median(bisect_t):.1f}x")

        snap = lake.snapshot()
        refs = [r for r in snap.list_objects("ns")]
        locs = {r: snap.object_location(r.kind, "ns", r.name) for r in refs}
        cached_t, plain_t = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for r in refs:
                lake.render_definition(snap, r, locs[r])
            cached_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for r in refs:
                render(r.kind, snap.read_definition(r, locs[r]))
            plain_t.append(time.perf_counter() - t0)
        n = len(refs)
        print(
            f"render {n} definitions: cached {statistics.median(cached_t) / n * 1e6:.1f} us each "
            f"({lake._renders.renders} renders in {args.rounds} rounds), "
            f"uncached {statistics.median(plain_t) / n * 1e6:.1f} us each "
            f"({n * args.rounds} renders)"
        )


if __name__ == "__main__":
    main()
