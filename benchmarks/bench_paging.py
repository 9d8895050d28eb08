"""Listing paths of a big namespace, one code tree against another in the same run
(issue 13, "general read paths"), each case in a child process per tree, the trees
alternating round by round:

- txn-paging: every table name of the namespace paged (1,000 a page) inside a
  transaction that has one pending write; prints the base pairs the pages read (the
  old code re-read the whole rest of the range on every page);
- txn-paging-many: the same inside a transaction with 50,000 pending creates in the
  namespace (the old code sorted every pending key again on every page);
- readdir: the FUSE `readdir` of the namespace (TrinityOperations without a mount),
  cold (a new Lakehouse and mount object) and warm (the same call again);
- iter-all: `CatalogReader.iter_all` of the version (what find/du walk);
- scan-range: `catalog.ranges.scan_range` of the whole version (parallel reads).

Times are medians of --rounds; Python function calls (cProfile, one extra run) and
node files read are printed beside them: those counts do not depend on the machine.

    python benchmarks/bench_paging.py --lake /work/ls-data/lake \\
        --tree old=/work/wt/base0 --tree new=. --rounds 3
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

CASES = ("txn-paging", "txn-paging-many", "readdir-cold", "readdir-warm", "iter-all", "scan-range")


def _calls(fn: Callable[[], object]) -> int:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]


def child(case: str, lake_root: str, namespace: str) -> dict[str, object]:
    """One timed run of `case` (and one profiled run for the call count)."""
    from trinityfs import Lakehouse

    def setup() -> Callable[[], dict[str, object]]:
        lake = Lakehouse.open(lake_root)
        if case.startswith("txn-paging"):
            txn = lake.transaction()
            txn.create_table(namespace, "zz_pending")  # a pending write in the range
            if case == "txn-paging-many":
                for i in range(50_000):
                    txn.create_table(namespace, f"zz{i:06d}")
            base = txn.txn.base
            plain = base.scan_prefix
            seen = {"pairs": 0, "scans": 0}

            def counting(prefix, after=None, limit=None):
                page = plain(prefix, after, limit)
                seen["pairs"] += len(page)
                seen["scans"] += 1
                return page

            base.scan_prefix = counting  # type: ignore[method-assign]

            def run() -> dict[str, object]:
                names = sum(1 for _ in txn.iter_names("table", namespace))
                return {"items": names, "base_pairs_read": seen["pairs"], "scans": seen["scans"]}

            run.stats = lake.storage.stats.snapshot  # type: ignore[attr-defined]
            return run
        if case.startswith("readdir"):
            from trinityfs.fuse.operations import TrinityOperations

            ops = TrinityOperations(lake, latest_ttl=60, prefetch_threads=0)
            if case == "readdir-warm":
                ops.readdir(f"/{namespace}", 0)

            def run() -> dict[str, object]:
                entries = ops.readdir(f"/{namespace}", 0)
                return {"items": len(entries) - 2}

            run.stats = lake.storage.stats.snapshot  # type: ignore[attr-defined]
            return run
        if case == "iter-all":
            snap = lake.snapshot()

            def run() -> dict[str, object]:
                return {"items": sum(1 for _ in snap.iter_all())}

            run.stats = lake.storage.stats.snapshot  # type: ignore[attr-defined]
            return run
        if case == "scan-range":
            from trinityfs.catalog.ranges import scan_range

            snap = lake.at()

            def run() -> dict[str, object]:
                return {"items": sum(1 for _ in scan_range(snap))}

            run.stats = lake.storage.stats.snapshot  # type: ignore[attr-defined]
            return run
        raise SystemExit(f"unknown case {case!r}")

    run = setup()
    start = time.perf_counter()
    out = run()
    out["seconds"] = time.perf_counter() - start
    out["files_read"] = getattr(run, "stats", dict)().get("read", 0)
    out["calls"] = _calls(setup())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", required=True, help="a lake with a big namespace")
    parser.add_argument("--namespace", default="ns")
    parser.add_argument("--tree", action="append", default=[], help="label=path, repeatable")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.lake, args.namespace)))
        return
    trees = [t.split("=", 1) for t in args.tree] or [["this", "."]]
    cases = args.case or list(CASES)
    print(f"load average {os.getloadavg()}", flush=True)
    results: dict[tuple[str, str], list[dict[str, object]]] = {}
    for _ in range(args.rounds):
        for case in cases:
            for label, path in trees:
                env = dict(os.environ, PYTHONPATH=str(Path(path).resolve()))
                command = [sys.executable, __file__, "--child", case, "--lake", args.lake]
                proc = subprocess.run(
                    [*command, "--namespace", args.namespace],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                results.setdefault((case, label), []).append(json.loads(proc.stdout))
    print(f"\nmedian of {args.rounds} rounds, trees alternating")
    print(f"{'case':<14} {'tree':<6} {'items':>8} {'seconds':>8} {'calls':>10}  counts")
    for case in cases:
        for label, _ in trees:
            runs = results[(case, label)]
            med = statistics.median(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
            last = runs[-1]
            extra = {k: v for k, v in last.items() if k not in ("items", "seconds", "calls")}
            print(
                f"{case:<14} {label:<6} {last['items']:8,d} {med:8.3f} {last['calls']:10,d}  "
                + " ".join(f"{k}={v:,}" for k, v in extra.items())
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
