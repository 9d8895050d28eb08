"""Bulk load of N tables in one version: the streaming path against a plain transaction.

Each load runs in a fresh child process (peak RSS is its own: resource.getrusage's
ru_maxrss and /proc's VmHWM): a new lakehouse (trinityfs's defaults, fsync off for
both paths), 10 namespaces, N tables with names spread over the key range, created
either with `lake.bulk_load()` ("bulk") or in one `lake.transaction()` ("txn", the
path before issue 13 item 5). Printed per load: peak RSS, time, files and bytes
written, the root file's size. Then, in another child, the first one-table commit
after the load (it merges the load's root messages into the tree): its peak RSS,
time and bytes, and the node files a cold lookup reads before and after it.

    python benchmarks/bench_bulk.py --sizes 100000 1000000 --txn-sizes 100000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMESPACES = [f"ns{j:02d}" for j in range(10)]


def spread_name(i: int) -> str:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()


def peaks() -> dict:
    out = {"ru_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                out["vmhwm_mib"] = int(line.split()[1]) / 1024
    return out


def load(url: str, n: int, path: str) -> dict:
    """Child: create the lakehouse and load n tables by `path` ("bulk" or "txn")."""
    from trinityfs import Lakehouse

    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("seed")  # a version before the load, like a lakehouse in use
    start = time.perf_counter()
    before = lake.storage.stats.snapshot()
    ctx = lake.bulk_load() if path == "bulk" else lake.transaction()
    with ctx as t:
        for ns in NAMESPACES:
            t.create_namespace(ns)
        for i in range(n):
            t.create_table(NAMESPACES[i % 10], spread_name(i), {"table_format": "ICEBERG"})
        staged = time.perf_counter()
    done = time.perf_counter()
    after = lake.storage.stats.snapshot()
    version = lake.latest_version()
    return {
        "path": path,
        "tables": n,
        "stage_s": staged - start,
        "commit_s": done - staged,
        "total_s": done - start,
        "files_written": (after["write"] + after["create"]) - (before["write"] + before["create"]),
        "bytes_written": after["bytes_written"] - before["bytes_written"],
        "version": version,
        "root_bytes": _root_size(url, version),
        **peaks(),
    }


def next_commit(url: str, n: int) -> dict:
    """Child: a cold lookup, then the first one-table commit after the load."""
    from trinityfs import Lakehouse

    lake = Lakehouse.open(url, storage_options={"fsync": False})
    nodes = lake.engine.nodes(lake.lakehouse_def().order)
    start = time.perf_counter()
    lake.describe_table(NAMESPACES[(n // 2) % 10], spread_name(n // 2))
    lookup_s = time.perf_counter() - start
    files_before = 1 + nodes.nodes_decoded
    before = lake.storage.stats.snapshot()
    start = time.perf_counter()
    lake.create_table(NAMESPACES[0], "after-bulk")
    commit_s = time.perf_counter() - start
    written = lake.storage.stats.snapshot()["bytes_written"] - before["bytes_written"]
    worst = 0
    for i in range(0, n, max(1, n // 20)):
        cold = Lakehouse.open(url)  # a new instance: nothing decoded yet
        cold_nodes = cold.engine.nodes(cold.lakehouse_def().order)
        decoded = cold_nodes.nodes_decoded
        cold.describe_table(NAMESPACES[i % 10], spread_name(i))
        worst = max(worst, 1 + cold_nodes.nodes_decoded - decoded)  # the root + below
    return {
        "cold_lookup_files_after_load": files_before,
        "cold_lookup_after_load_s": lookup_s,
        "next_commit_s": commit_s,
        "next_commit_bytes": written,
        "cold_lookup_files_after_next_commit": worst,
        **peaks(),
    }


def _root_size(url: str, version: int) -> int:
    from trinityfs.format.paths import root_node_file

    return os.path.getsize(Path(url) / root_node_file(version))


def child(func: str, *args: object) -> dict:
    """Run `func(*args)` of this module in a fresh interpreter; its JSON result."""
    here = str(Path(__file__).parent)
    code = (
        f"import json, sys; sys.path.insert(0, {here!r}); import bench_bulk as b; "
        f"print(json.dumps(b.{func}(*json.loads(sys.argv[1]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument(
        "--txn-sizes", type=int, nargs="*", default=[100_000], help="sizes to run the old path at"
    )
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="keep the bulk lakes here")
    parser.add_argument("--no-next-commit", action="store_true")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for n in args.sizes:
            paths = ["txn", "bulk"] if n in args.txn_sizes else ["bulk"]
            for path in paths:
                base = args.keep if (args.keep and path == "bulk") else Path(tmp)
                url = str(base / f"{path}-{n}")
                result = child("load", url, n, path)
                print(
                    f"{n:>9,} tables {path:<4}: peak RSS {result['ru_maxrss_mib']:7.1f} MiB "
                    f"(VmHWM {result['vmhwm_mib']:.1f}), {result['total_s']:7.1f} s "
                    f"(stage {result['stage_s']:.1f}, commit {result['commit_s']:.1f}), "
                    f"{result['files_written']:,} files, {result['bytes_written'] / 1e6:,.1f} MB "
                    f"written, root {result['root_bytes'] / 1e6:,.2f} MB",
                    flush=True,
                )
                if not args.no_next_commit:
                    nxt = child("next_commit", url, n)
                    print(
                        f"{'':>16} next commit: peak RSS {nxt['ru_maxrss_mib']:7.1f} MiB, "
                        f"{nxt['next_commit_s']:.1f} s, {nxt['next_commit_bytes'] / 1e6:,.2f} MB; "
                        f"cold lookup node files {nxt['cold_lookup_files_after_load']} right "
                        f"after the load, {nxt['cold_lookup_files_after_next_commit']} after",
                        flush=True,
                    )
                print(json.dumps({"tables": n, "path": path, **result}), file=sys.stderr)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
