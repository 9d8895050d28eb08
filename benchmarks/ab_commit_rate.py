"""Single-writer commit rate of one or more trinityfs trees against PyIceberg's SqlCatalog
(SQLite), in fresh subprocesses, interleaved round by round (issue 13).

    python benchmarks/ab_commit_rate.py ROUNDS BATCH name=/path/to/tree ... sql=sql
    WHAT=props python benchmarks/ab_commit_rate.py 8 200 main=. sql=sql

Each round runs every variant once (the order rotates): BATCH table creates (or, with
WHAT=props, namespace property updates; SqlCatalog: create_namespace /
update_namespace_properties) in a new lake after 20 warm-up commits. `name=/tree` runs
the trinityfs found at /tree (PYTHONPATH). Prints per-variant medians, best and every
round, and each median against sql's; for trinityfs also os.fsync calls per
timed operation and the time of `Lakehouse.create` (not part of the rate).

PRELOAD=N (issue 13's "100k and 1M tables"): each variant first gets one catalog that
already holds N objects, used by every round: trinityfs a bulk-loaded lakehouse of N
tables in 10 namespaces, SqlCatalog a database of the same N tables in 10 namespaces
(rows inserted directly, as create_table writes them; the timed loop is create_namespace,
whose existence check scans the tables: PyIceberg's `namespace = X OR namespace LIKE
'X.%'` cannot use the index). Names are spread over the key range by a hash, in the
preload and in the timed loop, for both. Building takes minutes at 1M.

    PRELOAD=100000 python benchmarks/ab_commit_rate.py 12 200 old=/tree new=. sql=sql

Every lake is kept until the whole run ends: on ext4 without a journal, creating files
right after a mass deletion costs CPU skipping the recently deleted inodes (measured
2026-11-24: 1.5 -> 5.5 ms per create), so deleting between rounds biases the rounds
after it. Delete the printed directory some minutes before the next timed run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import hashlib, os, sys, time
what, work, n, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
preloaded = sys.argv[5] if len(sys.argv) > 5 else ""
def spread(i):
    return "t" + hashlib.blake2b(f"{work}/{i}".encode(), digest_size=8).hexdigest()
fsyncs, made = [0], 0.0
real_fsync = os.fsync
def counting(fd):
    fsyncs[0] += 1
    return real_fsync(fd)
os.fsync = counting
if kind == "sql":
    from pyiceberg.catalog.sql import SqlCatalog
    db = preloaded or f"{work}/r.db"
    sql = SqlCatalog("b", uri=f"sqlite:///{db}", warehouse=f"file://{work}/wh")
    if not preloaded:
        sql.create_namespace("ns", {"p0": "0"})
    for i in range(20):
        sql.create_namespace(spread(-1 - i) if preloaded else f"w{i}")
    fsyncs[0] = 0
    t = time.perf_counter()
    if what == "props":
        for i in range(n):
            sql.update_namespace_properties("ns", updates={"p0": str(i)})
    else:
        for i in range(n):
            sql.create_namespace(spread(i) if preloaded else f"n{i:06d}")
else:
    from trinityfs import Lakehouse
    Lakehouse.create(f"memory://warm-{os.getpid()}")  # imports: not part of create's time
    t = time.perf_counter()
    lake = Lakehouse.open(preloaded) if preloaded else Lakehouse.create(f"{work}/lake")
    made = time.perf_counter() - t
    if not preloaded:
        lake.create_namespace("ns", {"p0": "0"})
    for i in range(20):
        lake.create_table("ns", spread(-1 - i) if preloaded else f"w{i:06d}",
                          {"table_format": "ICEBERG"})
    fsyncs[0] = 0
    t = time.perf_counter()
    if what == "props":
        for i in range(n):
            lake.set_namespace_properties("ns", {"p0": str(i)})
    else:
        for i in range(n):
            lake.create_table("ns", spread(i) if preloaded else f"t{i:06d}",
                              {"table_format": "ICEBERG"})
print(n / (time.perf_counter() - t), fsyncs[0] / n, made * 1e3)
"""


PRELOAD_LAKE = r"""
import hashlib, sys
from trinityfs import Lakehouse
url, n = sys.argv[1], int(sys.argv[2])
namespaces = ["ns"] + [f"ns{j:02d}" for j in range(9)]
lake = Lakehouse.create(url, storage_options={"fsync": False})
with lake.bulk_load() as load:
    for ns in namespaces:
        load.create_namespace(ns, {"p0": "0"})
    for i in range(n):
        name = "t" + hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()
        load.create_table(namespaces[i % 10], name, {"table_format": "ICEBERG"})
"""

PRELOAD_SQL = r"""
import hashlib, sqlite3, sys
from pyiceberg.catalog.sql import SqlCatalog
db, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
namespaces = ["ns"] + [f"ns{j:02d}" for j in range(9)]
sql = SqlCatalog("b", uri=f"sqlite:///{db}", warehouse=f"file://{work}")
for ns in namespaces:
    sql.create_namespace(ns, {"p0": "0"})
def row(i):
    name = "t" + hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()
    ns = namespaces[i % 10]
    return ("b", ns, name, f"file://{work}/{ns}/{name}/metadata/00000.metadata.json", None,
            "TABLE")
with sqlite3.connect(db) as conn:
    conn.executemany("INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, ?, ?)", map(row, range(n)))
"""


def preload(variants: list[list[str]], keep: str, n: int) -> dict[str, str]:
    """One catalog of n objects per variant, built by that variant's code."""
    made = {}
    for name, tree in variants:
        env = dict(os.environ)
        if tree == "sql":
            made[name] = os.path.join(keep, f"preload-{name}.db")
            args = [PRELOAD_SQL, made[name], keep, str(n)]
        else:
            env["PYTHONPATH"] = os.path.abspath(tree)
            made[name] = os.path.join(keep, f"preload-{name}")
            args = [PRELOAD_LAKE, made[name], str(n)]
        out = subprocess.run([sys.executable, "-c", *args], env=env, capture_output=True)
        if out.returncode:
            sys.exit(f"preloading {name} failed: {out.stderr.decode()[-2000:]}")
    return made


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, batch = int(sys.argv[1]), int(sys.argv[2])
    variants = [arg.split("=", 1) for arg in sys.argv[3:]]
    what = os.environ.get("WHAT", "create")
    keep = tempfile.mkdtemp(dir=os.environ.get("WORKDIR", "."), prefix="ab-commit-rate-")
    n_preload = int(os.environ.get("PRELOAD", "0"))
    preloaded = preload(variants, keep, n_preload) if n_preload else {}
    rates: dict[str, list[float]] = {name: [] for name, _ in variants}
    fsyncs: dict[str, list[float]] = {name: [] for name, _ in variants}
    creates: dict[str, list[float]] = {name: [] for name, _ in variants}
    for r in range(rounds):
        shift = r % len(variants)
        for name, tree in variants[shift:] + variants[:shift]:
            work = tempfile.mkdtemp(dir=keep)
            env = dict(os.environ)
            if tree != "sql":
                env["PYTHONPATH"] = os.path.abspath(tree)
            kind = "sql" if tree == "sql" else "lake"
            out = subprocess.run(
                [sys.executable, "-c", CHILD, what, work, str(batch), kind]
                + ([preloaded[name]] if preloaded else []),
                env=env,
                capture_output=True,
                text=True,
                cwd=work,
            )
            if out.returncode:
                sys.exit(f"{name} failed: {out.stderr[-2000:]}")
            rate, per_op, made_ms = out.stdout.strip().splitlines()[-1].split()
            rates[name].append(float(rate))
            fsyncs[name].append(float(per_op))
            creates[name].append(float(made_ms))
    medians = {name: statistics.median(v) for name, v in rates.items()}
    held = f", each catalog preloaded with {n_preload:,} objects" if n_preload else ""
    print(f"{what}, {rounds} rounds of {batch}{held}; lakes kept in {keep}")
    for name, values in rates.items():
        line = (
            f"{name:>10}: median {medians[name]:7.1f}/s  best {max(values):7.1f}/s  "
            f"all {' '.join(f'{x:.0f}' for x in values)}"
        )
        if "sql" in medians and name != "sql":
            line += f"   vs sql median {medians[name] / medians['sql']:.2f}x"
        print(line, flush=True)
    for name, tree in variants:  # SQLite's fdatasyncs are not os.fsync calls: not counted
        if tree != "sql":
            print(
                f"{name:>10}: os.fsync per {what} {statistics.mean(fsyncs[name]):.2f} "
                f"(timed loop)   Lakehouse.create median {statistics.median(creates[name]):.1f} "
                f"ms (before the timed loop)"
            )


if __name__ == "__main__":
    main()
