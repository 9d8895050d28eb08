"""Warm `cat` of a definition through trinity:// next to fsspec's local `cat` of the same
JSON in a plain directory, interleaved in one process (issue 13 item 2).

A lakehouse of N tables (10 namespaces, names spread over the key range) is built once;
the same JSON definitions are written as plain files. Then rounds alternate:

- fsspec local: `LocalFileSystem().cat(path)` of the plain files (the baseline);
- trinity latest: `TrinityFileSystem.cat("ns/t")`, warm (one probe of the next root);
- trinity pinned: `cat("v/<version>/ns/t")` (no probe: versions are immutable);
- trinity bounded: the same with `Freshness(max_staleness_seconds=60)` (no request).

Storage requests and Python/C function calls per cat are counted next to the times
(they do not depend on the machine). Also: requests of a cold `latest_version()` with
the hint lagging by 0..7.

    python benchmarks/bench_freshness.py --tables 100000 --rounds 5 --cats 2000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fsspec
from bench_commits import NAMESPACES, build, spread_name

from trinityfs import Lakehouse
from trinityfs.catalog import Freshness
from trinityfs.fs.spec import TrinityFileSystem
from trinityfs.storage import Storage
from trinityfs.txn.roots import HINT_INTERVAL


def calls(fn, item) -> int:
    """Python and C function calls of one `fn(item)` (a count that does not depend on
    the machine, printed next to the times)."""
    count = 0

    def profile(frame, event, arg) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn(item)
    finally:
        sys.setprofile(None)
    return count - 1  # sys.setprofile(None) itself


def timed(fn, items) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cats", type=int, default=2000, help="cats per round and kind")
    parser.add_argument("--distinct", type=int, default=200, help="distinct tables read")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--lake", type=Path, default=None, help="reuse a lake built before")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = args.lake or Path(tmp) / "lake"
        if args.lake is None:
            build(str(root), args.tables, baseline=False)
        step = max(1, args.tables // args.distinct)
        picks = [(NAMESPACES[i % 10], spread_name(i)) for i in range(0, args.tables, step)]
        picks = picks[: args.distinct]
        fs = TrinityFileSystem(str(root), skip_instance_cache=True)
        bounded = TrinityFileSystem(str(root), skip_instance_cache=True)
        bounded.lake.freshness = Freshness(max_staleness_seconds=60)
        version = fs.lake.latest_version()
        plain = Path(tmp) / "plain"
        local = fsspec.filesystem("file")
        for ns, name in picks:
            (plain / ns).mkdir(parents=True, exist_ok=True)
            (plain / ns / f"{name}.json").write_bytes(fs.cat(f"{ns}/{name}"))
        cats = [picks[i % len(picks)] for i in range(args.cats)]
        kinds = {
            "fsspec local cat": (
                local.cat,
                [str(plain / ns / f"{t}.json") for ns, t in cats],
                None,
            ),
            "trinity latest": (fs.cat, [f"{ns}/{t}" for ns, t in cats], fs),
            "trinity pinned": (fs.cat, [f"v/{version}/{ns}/{t}" for ns, t in cats], fs),
            "trinity bounded": (bounded.cat, [f"{ns}/{t}" for ns, t in cats], bounded),
        }
        for fn, items, _ in kinds.values():  # warm every cache
            for item in items[: len(picks)]:
                fn(item)
        times: dict[str, list[float]] = {k: [] for k in kinds}
        requests: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(args.rounds):
            for kind, (fn, items, owner) in kinds.items():
                stats = owner.lake.storage.stats if owner is not None else None
                before = stats.snapshot()["requests"] if stats else 0
                times[kind].append(timed(fn, items))
                if stats:
                    requests[kind].append((stats.snapshot()["requests"] - before) / len(items))
        base = statistics.median(times["fsspec local cat"])
        print(f"\nwarm cat, {args.tables:,} tables, median of {args.rounds} interleaved rounds")
        print(f"{'kind':<18} {'us/cat':>8} {'x local':>8} {'requests/cat':>13} {'calls/cat':>10}")
        for kind, (fn, items, _) in kinds.items():
            med = statistics.median(times[kind])
            req = f"{statistics.mean(requests[kind]):.3f}" if requests[kind] else "-"
            n = min(calls(fn, item) for item in items[:20])
            print(f"{kind:<18} {med:8.1f} {med / base:8.2f} {req:>13} {n:>10}")

        print(f"\ncold latest_version() by hint lag (hint written every {HINT_INTERVAL} versions)")
        lake = Lakehouse.open(str(root))
        latest = lake.latest_version()
        print(f"{'hint lag':>8} {'requests':>9}")
        for lag in range(HINT_INTERVAL):
            lake.storage.write("_latest_hint.txt", str(latest - lag).encode())
            cold = Lakehouse(Storage(str(root)))
            assert cold.latest_version() == latest
            print(f"{lag:8d} {cold.storage.stats.snapshot()['requests']:9d}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
