"""Storage requests of a one-table commit and of a warm lookup on S3 (moto on
127.0.0.1), counted by the S3 client itself, next to the pre-issue-13 path in the
same run (issue 13 item 4).

The baseline is the same code with freshness turned off on its Lakehouse: every
"latest?" reads both markers and probes (as before), and every commit writes the hint
and re-reads the oldest marker. Commits alternate between the two lakehouses.

    python benchmarks/bench_s3_requests.py --tables 2000 --commits 200 --lookups 200
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import uuid
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from s3_server import moto_s3
from test_regression_s3_read_extra_requests import count_requests

from trinityfs import Lakehouse


def pre_issue(lake: Lakehouse) -> Lakehouse:
    roots = lake.engine.roots
    roots.trusted_latest = lambda: None  # every question runs the full marker path
    roots.hint_due = lambda version: True  # the hint on every commit
    return lake


def load(lake: Lakehouse, tables: int) -> None:
    lake.create_namespace("ns")
    batch = 500
    for start in range(0, tables, batch):
        with lake.transaction() as txn:
            for i in range(start, min(tables, start + batch)):
                txn.create_table("ns", f"t{i:07d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--lookups", type=int, default=200)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    print(f"load average {os.getloadavg()}", flush=True)
    with moto_s3("bench") as options:
        lakes = {}
        for kind in ("trinityfs", "pre-issue path"):
            url = f"s3://bench/{uuid.uuid4().hex}"
            lake = Lakehouse.create(url, storage_options=options)
            load(lake, args.tables)
            lake = Lakehouse.open(url, storage_options=options)
            lakes[kind] = pre_issue(lake) if kind != "trinityfs" else lake
            lakes[kind].create_table("ns", "warmup")
        per_commit: dict[str, list[int]] = {k: [] for k in lakes}
        kinds: dict[str, Counter] = {k: Counter() for k in lakes}
        for i in range(args.commits):
            for kind, lake in lakes.items():
                with count_requests(lake.storage) as sent:
                    lake.create_table("ns", f"c{i:07d}")
                per_commit[kind].append(len(sent))
                kinds[kind].update(sent)
        per_lookup: dict[str, list[int]] = {k: [] for k in lakes}
        for i in range(args.lookups):
            for kind, lake in lakes.items():
                name = f"c{i % args.commits:07d}"
                with count_requests(lake.storage) as sent:
                    lake.describe_table("ns", name)
                per_lookup[kind].append(len(sent))
        print(f"\nS3 (moto), {args.tables:,} tables, {args.commits} one-table commits each")
        print(
            f"{'path':<16} {'commit mean':>11} {'max':>4} {'lookup mean':>11} {'max':>4}  requests"
        )
        for kind in lakes:
            c, lk = per_commit[kind], per_lookup[kind]
            ops = ", ".join(f"{op} {n / args.commits:.2f}" for op, n in kinds[kind].most_common())
            print(
                f"{kind:<16} {statistics.mean(c):11.2f} {max(c):4d} "
                f"{statistics.mean(lk):11.2f} {max(lk):4d}  {ops}"
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
