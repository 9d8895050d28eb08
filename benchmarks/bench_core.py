"""Core engine benchmark: lookups, commits and bulk loads on catalogs of several sizes.

For each catalog size (tables in one namespace, bulk-loaded in one transaction):
node files read by a cold lookup, warm lookup time, commits per second for single-table
creates, bytes and files written per commit (mean and max), and the time and peak memory
of the bulk load itself (measured in a child process so peak RSS is its own).

    python benchmarks/bench_core.py --sizes 1000 100000 1000000 --commits 10000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import tempfile
import time
from pathlib import Path

from trinityfs import Lakehouse


def peak_rss_mib() -> float:
    """This process's own peak resident memory (VmHWM; ru_maxrss can carry a parent's)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bulk_load(url: str, tables: int, out) -> None:
    """Create the lakehouse and load `tables` tables in one transaction (child process)."""
    start = time.perf_counter()
    lake = Lakehouse.create(url)
    lake.create_namespace("ns")
    with lake.transaction() as txn:
        for i in range(tables):
            txn.create_table("ns", f"t{i:07d}", {"table_format": "ICEBERG"})
    commit_done = time.perf_counter()
    lake.create_table("ns", "flush")  # the next commit flushes the bulk load into the tree
    flushed = time.perf_counter()
    peak_mib = peak_rss_mib()
    out.put(
        {
            "bulk_commit_s": commit_done - start,
            "flush_commit_s": flushed - commit_done,
            "peak_rss_mib": peak_mib,
        }
    )


def measure(tables: int, commits: int, workdir: Path) -> dict:
    url = str(workdir / f"lake-{tables}")
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=bulk_load, args=(url, tables, out))
    child.start()
    result = {"tables": tables, **out.get()}
    child.join()

    cold = Lakehouse.open(url)
    before = cold.storage.stats.snapshot()
    cold.describe_table("ns", f"t{tables // 2:07d}")
    after = cold.storage.stats.snapshot()
    nodes = cold.engine.nodes(cold.lakehouse_def().order)
    result["cold_lookup_node_files"] = 1 + nodes.nodes_decoded  # the root + nodes below it
    result["cold_lookup_requests"] = after["requests"] - before["requests"]

    snap = cold.snapshot()
    probe = [f"t{(i * 7919) % tables:07d}" for i in range(2000)]
    for name in probe:
        snap.object_location("table", "ns", name)
    before = cold.storage.stats.snapshot()
    start = time.perf_counter()
    for name in probe:
        snap.object_location("table", "ns", name)
    warm = (time.perf_counter() - start) / len(probe)
    result["warm_lookup_us"] = warm * 1e6
    result["warm_lookup_requests"] = cold.storage.stats.snapshot()["requests"] - before["requests"]

    lake = Lakehouse.open(url)
    written_bytes, written_files = [], []
    start = time.perf_counter()
    for i in range(commits):
        before = lake.storage.stats.snapshot()
        lake.create_table("ns", f"c{i:07d}")
        after = lake.storage.stats.snapshot()
        written_bytes.append(after["bytes_written"] - before["bytes_written"])
        written_files.append(
            (after["write"] + after["create"]) - (before["write"] + before["create"])
        )
    elapsed = time.perf_counter() - start
    result.update(
        commits=commits,
        commits_per_s=commits / elapsed,
        bytes_per_commit_mean=statistics.mean(written_bytes),
        bytes_per_commit_max=max(written_bytes),
        files_per_commit_mean=statistics.mean(written_files),
        files_per_commit_max=max(written_files),
    )
    lake.check()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="one JSON object per size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for size in args.sizes:
            result = measure(size, args.commits, Path(tmp))
            if args.json:
                print(json.dumps(result))
                continue
            print(f"\n== {size:,} tables ==")
            for key, value in result.items():
                shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
                print(f"  {key:<26} {shown}")


if __name__ == "__main__":
    main()
