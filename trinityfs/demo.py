"""The main job on the embedded default: a lakehouse in a local directory, end to end.

Creates the lakehouse, adds namespaces and tables over several commits, lists the
versions and reads an old one. Run: `python -m trinityfs.demo [DIRECTORY]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from trinityfs import Lakehouse, TrinityError

MARKER = ".trinityfs-demo.json"


class FolderNotOurs(Exception):
    """The demo's folder holds something the demo did not create."""


def _files_below(directory: Path) -> list[str]:
    """Every file, symlink and directory below `directory`, relative, deepest first."""
    found = []
    for top, dirs, files in os.walk(directory, topdown=False):
        for name in files + dirs:
            found.append(os.path.relpath(os.path.join(top, name), directory))
    return found


def claim_folder(directory: Path) -> None:
    """Make `directory` the demo's own: create it, or empty an earlier demo's folder.

    Only what an earlier run recorded in its marker file is deleted, and only when nothing
    else is there: a folder holding anything the demo did not create is refused."""
    if not directory.exists():
        directory.mkdir(parents=True)
    elif not directory.is_dir() or directory.is_symlink():
        raise FolderNotOurs(f"{directory} exists and is not a directory")
    elif any(directory.iterdir()):
        marker = directory / MARKER
        try:
            recorded = set(json.loads(marker.read_text())["files"])
        except (OSError, ValueError, KeyError, TypeError):
            raise FolderNotOurs(
                f"{directory} is not empty and is not an earlier trinityfs-demo folder; "
                "give a new or empty directory"
            ) from None
        present = _files_below(directory)
        foreign = [p for p in present if p != MARKER and p not in recorded]
        if foreign:
            raise FolderNotOurs(
                f"{directory} holds {foreign[-1]!r}, which the demo did not create; "
                "nothing deleted (give a new or empty directory)"
            )
        for relative in present:  # deepest first
            path = directory / relative
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            elif relative != MARKER:
                path.unlink()
        marker.unlink()
    _record(directory)


def _record(directory: Path) -> None:
    """Write the marker listing everything in the folder (all of it the demo's own)."""
    files = [p for p in _files_below(directory) if p != MARKER]
    text = json.dumps({"created_by": "trinityfs-demo", "files": sorted(files)}, indent=1)
    (directory / MARKER).write_text(text + "\n")


def run(directory: Path) -> None:
    claim_folder(directory)
    try:
        _run(directory)
    finally:
        _record(directory)


def _run(directory: Path) -> None:
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
    except (TrinityError, FolderNotOurs, OSError) as exc:
        print(f"trinityfs-demo: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
