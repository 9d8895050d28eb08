"""The main job on the embedded default: a lakehouse in a local directory, end to end.

Creates the lakehouse, adds namespaces and tables over several commits, lists the
versions and reads an old one. Run: `python -m trinityfs.demo [DIRECTORY]`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from trinityfs import Lakehouse, TrinityError


def run(directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    lake = Lakehouse.create(str(directory))
    print(f"created lakehouse at {lake.url} (version {lake.latest_version()})")
    lake.create_namespace("sales", {"owner": "analytics"})
    lake.create_namespace("staging")
    with lake.transaction() as txn:  # several changes, one commit
        for name in ("orders", "customers", "items"):
            txn.create_table("sales", name, {"table_format": "ICEBERG", "table_type": "MANAGED"})
        txn.create_view("sales", "big_orders", {"properties": {"sql": "select * from orders"}})
    first_tables = lake.latest_version()
    lake.replace_table("sales", "orders", {"table_format": "ICEBERG", "properties": {"v": "2"}})
    lake.rename_table("sales", "items", "staging", "items_old")
    lake.drop_view("sales", "big_orders")

    print("\nversions:")
    for info in lake.versions():
        when = datetime.fromtimestamp(info.created_at_millis / 1000, UTC).isoformat(
            timespec="milliseconds"
        )
        changed = ", ".join(
            f"{c.action} {c.object.kind} {c.object}" for c in lake.changes(info.version)
        )
        print(f"  {info.version:>3}  {when}  {changed or '(new lakehouse)'}")

    latest = lake.snapshot()
    old = lake.at(first_tables)
    print(
        f"\nlatest version {latest.version}: sales = {latest.list_tables('sales')}, "
        f"staging = {latest.list_tables('staging')}"
    )
    print(
        f"version {old.version}: sales = {old.list_tables('sales')}, "
        f"views = {old.list_views('sales')}"
    )
    print(
        f"orders at version {old.version}: {dict(old.describe_table('sales', 'orders').properties)}"
        f"; latest: {dict(latest.describe_table('sales', 'orders').properties)}"
    )
    print(f"diff {old.version} -> {latest.version}:")
    for change in lake.diff(old.version, latest.version):
        print(f"  {change.action} {change.object.kind} {change.object}")
    stats = lake.check()
    print(f"\ntree check of version {latest.version}: ok ({stats.nodes} nodes, {stats.keys} keys)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="demo-lake", type=Path)
    args = parser.parse_args(argv)
    try:
        run(args.directory)
    except TrinityError as exc:
        print(f"trinityfs-demo: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
