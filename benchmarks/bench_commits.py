"""What a commit costs, next to its baseline in the same run (interleaved).

1. Bytes written per one-table commit, on a lakehouse of N tables (10 namespaces, names
   spread over the key range by a hash), new names drawn from the same spread:
   trinityfs's defaults for a new lakehouse (128 KiB nodes, zstd node files, flush
   policy) against the pre-issue-13 writer on a lakehouse with FORMAT.md's defaults
   (1 MiB nodes, plain files, buffers flushed only at the format's budget). Commits
   alternate between the two lakehouses. Also: node files a cold lookup reads, and
   fsyncs per commit (counted by wrapping os.fsync).
2. Single-writer commits per second against PyIceberg's SqlCatalog on SQLite in the same
   directory: table create vs create_namespace, namespace property update vs
   update_namespace_properties; alternating batches.

    python benchmarks/bench_commits.py --sizes 100000 1000000 --commits 2000 --rate-ops 2000
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from trinityfs import Lakehouse
from trinityfs.format.definitions import PROP_NODE_FILE_COMPRESSION
from trinityfs.tree import TreeWriter
from trinityfs.tree.budget import FlushPolicy

NAMESPACES = [f"ns{j:02d}" for j in range(10)]
BATCH = 50_000
OLD_POLICY = FlushPolicy(2**62, 2**62)  # flush only at the format's budget
NEW_POLICY = TreeWriter.default_policy


def spread_name(i: int) -> str:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()


@contextlib.contextmanager
def policy(p: FlushPolicy):
    saved = TreeWriter.default_policy
    TreeWriter.default_policy = p
    try:
        yield
    finally:
        TreeWriter.default_policy = saved


class FsyncCounter:
    def __init__(self) -> None:
        self.count = 0
        self._real = os.fsync

    def __enter__(self) -> FsyncCounter:
        def counting(fd):
            self.count += 1
            return self._real(fd)

        os.fsync = counting
        return self

    def __exit__(self, *exc) -> None:
        os.fsync = self._real


def build(
    url: str, n: int, baseline: bool, how: str = "txn", order: int | None = None
) -> Lakehouse:
    """The lakehouse of n tables (opened as is when `url` holds one already); `how`:
    "txn" = transactions of BATCH tables, "bulk" = one `lake.bulk_load()`; `order`:
    the tree order of trinityfs's lakehouse (default: FORMAT.md's, 128)."""
    if Path(url).exists():  # built by an earlier run (--lakes): reuse it when complete
        lake = Lakehouse.open(url)
        built = 1 if how == "bulk" else 1 + -(-n // BATCH)  # versions of a complete build
        if lake.latest_version() < built:
            raise SystemExit(f"{url} holds an incomplete build: remove it")
        return lake
    if baseline:
        opts = {
            "node_file_max_size_bytes": 1048576,
            "properties": {PROP_NODE_FILE_COMPRESSION: "none"},
        }
    else:
        opts = {} if order is None else {"order": order}
    with policy(OLD_POLICY if baseline else NEW_POLICY):
        lake = Lakehouse.create(url, storage_options={"fsync": False}, **opts)
        if how == "bulk":
            with lake.bulk_load() as load:
                for ns in NAMESPACES:
                    load.create_namespace(ns)
                for i in range(n):
                    load.create_table(
                        NAMESPACES[i % 10], spread_name(i), {"table_format": "ICEBERG"}
                    )
            return Lakehouse.open(url)
        with lake.transaction() as txn:
            for ns in NAMESPACES:
                txn.create_namespace(ns)
        for start in range(0, n, BATCH):
            with lake.transaction() as txn:
                for i in range(start, min(n, start + BATCH)):
                    txn.create_table(
                        NAMESPACES[i % 10], spread_name(i), {"table_format": "ICEBERG"}
                    )
            print(
                f"  {'baseline' if baseline else 'trinityfs'}: {min(n, start + BATCH):,}/{n:,}",
                file=sys.stderr,
            )
    return Lakehouse.open(url)


def cold_lookup_files(url: str, n: int) -> int:
    worst = 0
    for i in range(0, n, max(1, n // 20)):
        lake = Lakehouse.open(url)
        nodes = lake.engine.nodes(lake.lakehouse_def().order)
        before = nodes.nodes_decoded
        lake.describe_table(NAMESPACES[i % 10], spread_name(i))
        worst = max(worst, 1 + nodes.nodes_decoded - before)  # the root + nodes below it
    return worst


def bytes_per_commit(
    n: int,
    commits: int,
    workdir: Path,
    how: str = "txn",
    build_only: bool = False,
    baseline_commits: int | None = None,
    window: int = 5000,
    order: int | None = None,
) -> None:
    """Bytes each one-table commit writes on both lakehouses, interleaved.

    `baseline_commits` (default: `commits`) stops the baseline early (at 1M tables it
    commits ~50/s); its figures are then over fewer commits, printed in the row. The
    mean over the last `window` commits of a run and the mean of each block of `window`
    commits show whether the run reached steady state (buffers below the root fill up
    over thousands of commits, so an early mean understates the cost).
    """
    baseline_commits = commits if baseline_commits is None else min(baseline_commits, commits)
    lakes = {
        "trinityfs": build(
            str(workdir / (f"new-{n}" if order is None else f"new-{n}-order{order}")),
            n,
            baseline=False,
            how=how,
            order=order,
        ),
        "baseline": build(str(workdir / f"old-{n}"), n, baseline=True, how=how),
    }
    if build_only:
        return
    print(f"\n== {n:,} tables: the first commit after the last bulk transaction ==")
    for name, lake in lakes.items():  # it merges the bulk load's messages into the tree
        with policy(NEW_POLICY if name == "trinityfs" else OLD_POLICY):
            before = lake.storage.stats.snapshot()["bytes_written"]
            lake.create_table(NAMESPACES[0], "after-bulk")
            after = lake.storage.stats.snapshot()["bytes_written"]
        print(f"  {name:<10} {(after - before) / 1000:,.1f} KB")
    written: dict[str, list[int]] = {name: [] for name in lakes}
    fsyncs: dict[str, int] = dict.fromkeys(lakes, 0)
    elapsed: dict[str, float] = dict.fromkeys(lakes, 0.0)
    runs = {"trinityfs": commits, "baseline": baseline_commits}
    for c in range(commits):
        for name, lake in lakes.items():
            if c >= runs[name]:
                continue
            i = n + c
            with policy(NEW_POLICY if name == "trinityfs" else OLD_POLICY), FsyncCounter() as fc:
                before = lake.storage.stats.snapshot()["bytes_written"]
                start = time.perf_counter()
                lake.create_table(NAMESPACES[i % 10], spread_name(i))
                elapsed[name] += time.perf_counter() - start
                written[name].append(lake.storage.stats.snapshot()["bytes_written"] - before)
            fsyncs[name] += fc.count
        if (c + 1) % window == 0:
            done = written["trinityfs"][-window:]
            print(
                f"  commits {c + 1 - window + 1:>7,}-{c + 1:<7,} trinityfs mean "
                f"{statistics.mean(done) / 1000:.1f} KB, max {max(done) / 1000:.1f} KB",
                flush=True,
            )
    print(f"\n== bytes per one-table commit, {n:,} tables, interleaved ==")
    header = ("commits", "mean KB", f"last {window:,} KB", "p99 KB", "max KB")
    header += ("fsyncs/commit", "commits/s", "cold lookup files")
    print(f"  {'':<10}" + "".join(f"{h:>19}" for h in header))
    for name, lake in lakes.items():
        done = runs[name]
        if not done:
            continue
        sizes = sorted(written[name])
        row = (
            f"{done:,}",
            f"{statistics.mean(sizes) / 1000:.1f}",
            f"{statistics.mean(written[name][-window:]) / 1000:.1f}",
            f"{sizes[int(len(sizes) * 0.99)] / 1000:.1f}",
            f"{sizes[-1] / 1000:.1f}",
            f"{fsyncs[name] / done:.2f}",
            f"{done / elapsed[name]:.1f}",
            str(cold_lookup_files(lake.url, n)),
        )
        print(f"  {name:<10}" + "".join(f"{v:>19}" for v in row))
        lake.check()


def commit_rate(ops: int, workdir: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    Lakehouse.create("memory://rate-warm")  # imports: not part of create's time below
    made = time.perf_counter()
    with FsyncCounter() as made_fsyncs:
        lake = Lakehouse.create(str(workdir / "rate-lake"))
    made = time.perf_counter() - made
    lake.create_namespace("ns", {"p0": "0"})
    sql = SqlCatalog(
        "bench", uri=f"sqlite:///{workdir / 'rate.db'}", warehouse=f"file://{workdir / 'wh'}"
    )
    sql.create_namespace("ns", {"p0": "0"})
    times = {k: 0.0 for k in ("lake create", "sql create", "lake props", "sql props")}
    fsyncs = {"lake create": 0, "lake props": 0}
    batch = 50
    for start in range(0, ops, batch):
        t = time.perf_counter()
        with FsyncCounter() as fc:
            for i in range(start, start + batch):
                lake.create_table("ns", f"t{i:06d}", {"table_format": "ICEBERG"})
        times["lake create"] += time.perf_counter() - t
        fsyncs["lake create"] += fc.count
        t = time.perf_counter()
        for i in range(start, start + batch):
            sql.create_namespace(f"n{i:06d}")
        times["sql create"] += time.perf_counter() - t
        t = time.perf_counter()
        with FsyncCounter() as fc:
            for i in range(start, start + batch):
                lake.set_namespace_properties("ns", {"p0": str(i)})
        times["lake props"] += time.perf_counter() - t
        fsyncs["lake props"] += fc.count
        t = time.perf_counter()
        for i in range(start, start + batch):
            sql.update_namespace_properties("ns", updates={"p0": str(i)})
        times["sql props"] += time.perf_counter() - t
    rate = {k: ops / v for k, v in times.items()}
    with sql.engine.connect() as conn:
        from sqlalchemy import text

        journal = conn.execute(text("PRAGMA journal_mode")).scalar()
        synchronous = conn.execute(text("PRAGMA synchronous")).scalar()
    print(f"\n== single-writer commits/s, {ops} each, alternating batches of {batch}, same disk ==")
    print(
        f"  SQLite: journal_mode={journal}, synchronous={synchronous} (2 = FULL; strace counts "
        "4 fdatasync per transaction: journal, its directory, journal header, database)"
    )
    print(
        f"  Lakehouse.create (before the timed loop): {made * 1e3:.1f} ms, "
        f"{made_fsyncs.count} fsyncs"
    )
    print(
        f"  trinityfs fsyncs per commit: table create {fsyncs['lake create'] / ops:.2f}, "
        f"property update {fsyncs['lake props'] / ops:.2f} (the definition's, its "
        "directory's and the root's content run together, then the root directory's: a "
        "commit waits for two journal commits in a row)"
    )
    pairs = (
        ("table create", "lake create", "SqlCatalog create_namespace", "sql create"),
        ("namespace props", "lake props", "SqlCatalog update_namespace_properties", "sql props"),
    )
    for label, ours, theirs_label, theirs in pairs:
        print(
            f"  {label:<16} {rate[ours]:8.1f}/s   {theirs_label:<40} {rate[theirs]:8.1f}/s"
            f"   ratio {rate[ours] / rate[theirs]:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--rate-ops", type=int, default=2000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--build",
        choices=("txn", "bulk"),
        default="txn",
        help="build the N-table lakes by transactions of 50,000 tables or one bulk load",
    )
    parser.add_argument(
        "--lakes", type=Path, default=None, help="keep the lakes here and reuse them when present"
    )
    parser.add_argument("--build-only", action="store_true", help="build the lakes and stop")
    parser.add_argument(
        "--baseline-commits",
        type=int,
        default=None,
        help="stop the baseline after this many commits (default: --commits)",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=5000,
        help="also report the mean of each block of this many commits and of the last one",
    )
    parser.add_argument(
        "--order",
        type=int,
        default=None,
        help="tree order of trinityfs's lakehouse (default 128; e.g. 256 for >= ~200k tables)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        if args.rate_ops and not args.build_only:
            commit_rate(args.rate_ops, Path(tmp))
        for n in args.sizes:
            where = args.lakes or Path(tmp)
            bytes_per_commit(
                n,
                args.commits,
                where,
                args.build,
                args.build_only,
                args.baseline_commits,
                args.window,
                args.order,
            )


if __name__ == "__main__":
    main()
