"""S3 requests of reading an old pinned version (moto on 127.0.0.1), counted by the S3
client itself: what `ls -l` of N files of an old version through the mount costs (each
use of a kept view is checked against the oldest marker, `Lakehouse.check_readable`,
then the file's definition is read from the view).

    python benchmarks/bench_pinned_reads_s3.py --tables 1000 --versions 12
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import uuid
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from expire_clock import expiring_later
from s3_server import moto_s3
from test_regression_s3_read_extra_requests import count_requests

import trinityfs.catalog.lakehouse as lakehouse_module
from trinityfs import Lakehouse

LATER_MILLIS = 10 * 60_000  # the reads run "10 minutes later": the versions look old


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=12)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's access log
    with moto_s3("bench") as options:
        url = f"s3://bench/{uuid.uuid4().hex}"
        lake = Lakehouse.create(url, storage_options=options)
        lake.create_namespace("ns")
        with lake.transaction() as txn:
            for i in range(args.tables):
                txn.create_table("ns", f"t{i:05d}", {"properties": {"i": str(i)}})
        pinned = lake.latest_version()
        for i in range(args.versions):
            lake.create_table("ns", f"later{i}")
        with expiring_later():
            lake.expire(max_age_millis=0, min_versions=args.versions + 1, grace_millis=0)
        real_now = lakehouse_module.now_millis
        lakehouse_module.now_millis = lambda: real_now() + LATER_MILLIS
        reader = Lakehouse.open(url, storage_options=options)
        snap = reader.at(pinned)
        names = snap.list_tables("ns")
        assert len(names) == args.tables, len(names)
        for name in names[:5]:  # warm: nodes of the pinned version in the cache
            reader.check_readable(snap)
            snap.describe_table("ns", name)
        with count_requests(reader.storage) as sent:
            for name in names:
                reader.check_readable(snap)  # what the mount does on each use of the view
                snap.describe_table("ns", name)
        counts = Counter(sent)
        print(
            f"oldest version {reader.oldest_version()}, pinned version {pinned}: "
            f"{args.tables} reads of a pinned table definition: {len(sent)} S3 requests "
            f"({dict(sorted(counts.items()))}), {len(sent) / args.tables:.2f} per read"
        )


if __name__ == "__main__":
    main()
