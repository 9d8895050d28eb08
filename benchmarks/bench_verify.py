"""What whole-tree verification (`verify="tree"`) costs a commit, next to the default
(`verify="reads"`) in the same run.

On a lakehouse of N tables (10 namespaces, names spread over the key range, trinityfs's
defaults for a new lakehouse), each mode gets a fresh handle (a new process's view) and
commits: (1) its first commit, (2) a second one right after, (3) one after another
writer committed K one-table commits. Printed per commit: files read from storage,
bytes read, the verifier's files verified, wall time. The modes alternate so that both
see the same machine load.

    python benchmarks/bench_verify.py --tables 10000 --others 10
    python benchmarks/bench_verify.py --tables 2000 --s3     (a moto S3 server on 127.0.0.1)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

from trinityfs import Lakehouse

NAMESPACES = [f"ns{j:02d}" for j in range(10)]
BATCH = 2000


def name(i: int) -> str:
    return "t" + hashlib.blake2b(i.to_bytes(8, "little"), digest_size=6).hexdigest()


def build(url: str, tables: int, options: dict) -> None:
    lake = Lakehouse.create(url, storage_options=options)
    with lake.transaction() as txn:
        for ns in NAMESPACES:
            txn.create_namespace(ns)
    for start in range(0, tables, BATCH):
        with lake.transaction() as txn:
            for i in range(start, min(tables, start + BATCH)):
                txn.create_table(NAMESPACES[i % 10], name(i), {"properties": {"n": str(i)}})
    # settle the buffers like a lake that has lived a while: single commits on top
    for i in range(tables, tables + 20):
        lake.create_table(NAMESPACES[i % 10], name(i))


def measured(lake: Lakehouse, table: str) -> dict:
    before = lake.storage.stats.snapshot()
    verified = lake.engine.tree_verifier.files_read if lake.engine.tree_verifier else 0
    started = time.perf_counter()
    lake.create_table(NAMESPACES[0], table)
    seconds = time.perf_counter() - started
    after = lake.storage.stats.snapshot()
    now = lake.engine.tree_verifier.files_read if lake.engine.tree_verifier else 0
    return {
        "reads": after["read"] - before["read"],
        "requests": after["requests"] - before["requests"],
        "bytes_read": after["bytes_read"] - before["bytes_read"],
        "verified": now - verified,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=10, help="commits by another writer")
    parser.add_argument("--s3", action="store_true", help="on a moto S3 server (127.0.0.1)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.s3:
            import logging

            logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from s3_server import moto_s3

            options = stack.enter_context(moto_s3("bench-verify"))
            url = "s3://bench-verify/lake"
        else:
            options = {"fsync": False}
            url = os.path.join(tempfile.mkdtemp(prefix="bench_verify_"), "lake")
        run(url, options, args)


def run(url: str, options: dict, args: argparse.Namespace) -> None:
    started = time.perf_counter()
    build(url, args.tables, options)
    print(f"lakehouse: {args.tables} tables at {url} ({time.perf_counter() - started:.1f} s)")
    print(f"load average: {os.getloadavg()}")
    other = Lakehouse.open(url, storage_options=options)
    serial = 0
    for rnd in range(args.rounds):
        for mode in ("reads", "tree"):
            lake = Lakehouse.open(url, storage_options=options, verify=mode)
            rows = []
            for step in ("first", "second"):
                serial += 1
                rows.append((step, measured(lake, f"bench{serial}")))
            for _ in range(args.others):
                serial += 1
                other.create_table(NAMESPACES[serial % 10], f"other{serial}")
            serial += 1
            rows.append((f"after {args.others} others", measured(lake, f"bench{serial}")))
            for step, m in rows:
                print(
                    f"round {rnd} verify={mode:5} {step:16} reads {m['reads']:6d}  "
                    f"requests {m['requests']:6d}  "
                    f"bytes {m['bytes_read']:10d}  verified {m['verified']:6d}  "
                    f"{m['seconds'] * 1000:8.1f} ms"
                )
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
