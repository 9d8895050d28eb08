"""Expiration benchmark: time and storage requests for expiring 10,000 versions.

Builds a lakehouse of N single-change versions on a local directory (one table created
or replaced per commit, in a namespace of T tables), then, each time on a freshly opened
lakehouse (cold caches, so every read is a real storage request):

1. mark cost vs. number of nodes (dry runs keeping K = 3, 100, 1000, ... versions):
   node files read by the marking walk, which stops at nodes already marked, against
   the baseline of a naive walk that reads every kept version's whole tree (computed
   exactly from the node graph; for the smallest K > 3 the naive walk is also run and
   timed, through an uncached storage);
2. the headline: a real expiration keeping 3 versions of N (time per phase, requests
   by kind, files and bytes removed);
3. the rerun, which finds nothing to do (idempotency cost).

    python benchmarks/bench_expire.py --versions 10000 [--tables 300] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trinityfs import Lakehouse
from trinityfs.catalog.writer import CatalogTransaction
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import root_node_file
from trinityfs.lifecycle.mark import Marker
from trinityfs.storage import Storage
from trinityfs.txn.transaction import Transaction

TREE = {
    "order": 8,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 8 * (16 + 16 + 204) + 2500,
    # expiration never sweeps files younger than the longest a commit may take
    # (min(txn TTL, commit budget)): a short TTL lets the figures run right after build
    "txn_ttl_millis": 2000,
}
OPTIONS = {"fsync": False}


def build(path: str, versions: int, tables: int) -> float:
    """`versions` commits, each building on the root the previous one wrote."""
    lake = Lakehouse.create(path, storage_options=OPTIONS, **TREE)
    lake.create_namespace("ns")
    engine = lake.engine
    snap = engine.snapshot()
    write_hint, engine.roots.write_hint = engine.roots.write_hint, lambda v: None
    start = time.perf_counter()
    for i in range(versions - 1):
        txn = CatalogTransaction(Transaction(engine, snap))
        name = f"t{i % tables}"
        if i < tables:
            txn.create_table("ns", name, {"properties": {"gen": str(i)}})
        else:
            txn.replace_table("ns", name, {"properties": {"gen": str(i)}})
        version = txn.commit()
        snap = engine.snapshot_of_root(version, engine.roots.load(version))
    write_hint(snap.version)
    elapsed = time.perf_counter() - start
    time.sleep(2.6)  # past the grace floor (the 2 s TTL above) and its margin
    return elapsed


def naive_baseline(path: str, keep: int) -> tuple[int, int]:
    """(distinct nodes, node reads of a naive walk) for the newest `keep` versions."""
    lake = Lakehouse.open(path, storage_options=OPTIONS)
    latest = lake.latest_version()
    children: dict[str, list[str]] = {}

    def remember(location, _data, nf) -> None:
        children[location] = list(nf.children or ())

    marker = Marker(lake.storage, on_node=remember)
    roots = [root_node_file(v) for v in range(max(0, latest - keep + 1), latest + 1)]
    marker.mark_roots(roots)
    size: dict[str, int] = {}

    def subtree(location: str) -> int:
        if location not in size:
            size[location] = 1 + sum(subtree(c) for c in children.get(location, ()))
        return size[location]

    naive = sum(subtree(r) for r in roots)  # each root and its whole tree, every version
    return len(marker.nodes) + len(roots), naive


def naive_walk(path: str, keep: int) -> tuple[float, int]:
    """Actually walk every kept tree without memo, through an uncached storage."""
    storage = Storage(path, OPTIONS, cache_bytes=0)
    latest = Lakehouse(storage).latest_version()
    start = time.perf_counter()
    reads = 0
    for version in range(max(0, latest - keep + 1), latest + 1):
        stack = [root_node_file(version)]
        while stack:
            location = stack.pop()
            reads += 1
            nf = decode_node(storage.read(location), None, location)
            stack.extend(nf.children or ())
    return time.perf_counter() - start, reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=300)
    parser.add_argument("--keep", type=int, nargs="*", default=[3, 100, 1000, 10_000])
    parser.add_argument("--dir", help="where to build (default: a temporary directory)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures: dict = {"versions": args.versions, "tables": args.tables, "tree": TREE}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = str(Path(tmp) / "lake")
        seconds = build(path, args.versions, args.tables)
        files = sum(1 for p in Path(path).rglob("*") if p.is_file())
        print(
            f"built {args.versions} versions in {seconds:.1f}s "
            f"({seconds / args.versions * 1000:.2f} ms/commit), {files} files"
        )
        figures["build_seconds"] = seconds
        figures["files_before"] = files

        print("\nmark cost vs. number of nodes (dry runs, cold caches)")
        print(
            f"{'keep':>6} {'distinct nodes':>15} {'mark reads':>11} {'naive reads':>12} "
            f"{'saved':>7} {'mark s':>8} {'requests':>9}"
        )
        figures["mark"] = []
        for keep in args.keep:
            keep = min(keep, args.versions)
            lake = Lakehouse.open(path, storage_options=OPTIONS)
            dry = lake.expire(max_age_millis=0, min_versions=keep, grace_millis=0, dry_run=True)
            distinct, naive = naive_baseline(path, keep)
            reads = dry.marked["node_reads"]
            row = {
                "keep": keep,
                "distinct_nodes": distinct,
                "mark_reads": reads,
                "naive_reads": naive,
                "mark_seconds": dry.phase_seconds["mark"],
                "requests": dry.requests["requests"],
                "would_remove_files": dry.files_removed,
            }
            figures["mark"].append(row)
            print(
                f"{keep:>6} {distinct:>15} {reads:>11} {naive:>12} {naive / reads:>6.1f}x "
                f"{row['mark_seconds']:>8.3f} {row['requests']:>9}"
            )
        small = min((k for k in args.keep if k > 3), default=None)
        if small is not None:
            walk_seconds, walk_reads = naive_walk(path, small)
            row = next(r for r in figures["mark"] if r["keep"] == min(small, args.versions))
            figures["naive_walk"] = {"keep": small, "seconds": walk_seconds, "reads": walk_reads}
            print(
                f"naive walk of {small} versions, run for real: {walk_reads} reads in "
                f"{walk_seconds:.3f}s vs. marking {row['mark_reads']} reads in "
                f"{row['mark_seconds']:.3f}s"
            )

        lake = Lakehouse.open(path, storage_options=OPTIONS)
        report = lake.expire(max_age_millis=0, min_versions=3, grace_millis=0)
        d = report.to_dict(files=False)
        figures["expire"] = d
        print(
            f"\nexpire {report.expired_versions} of {report.latest_version + 1} versions "
            f"(keep 3): {report.elapsed_seconds:.2f}s"
        )
        print("  phases: " + ", ".join(f"{k} {v:.3f}s" for k, v in report.phase_seconds.items()))
        print(
            f"  removed {report.files_removed} files, {report.bytes_removed / 2**20:.1f} MiB: "
            + ", ".join(f"{k} {v['files']}" for k, v in d["removed_by_kind"].items())
        )
        req = report.requests
        print(
            f"  requests {req['requests']}: "
            + ", ".join(
                f"{k} {req[k]}" for k in ("list", "read", "exists", "write", "delete") if req[k]
            )
        )
        print(f"  marked {d['marked']['nodes']} nodes with {d['marked']['node_reads']} node reads")
        again = Lakehouse.open(path, storage_options=OPTIONS).expire(
            max_age_millis=0, min_versions=3, grace_millis=0
        )
        figures["rerun"] = again.to_dict(files=False)
        print(
            f"rerun: {again.files_removed} files removed in {again.elapsed_seconds:.3f}s, "
            f"{again.requests['requests']} requests"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
