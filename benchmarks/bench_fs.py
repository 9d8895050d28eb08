"""The trinity:// filesystem against plain JSON files on local disk, in the same run.

Builds a lakehouse in a local directory with one namespace of --tables tables (default
100,000) plus --namespaces small namespaces, writes the same tree as plain JSON files
(same bytes as `cat` returns) in another local directory, then times:

- `ls` of the big namespace (names only, and with details), cold (a new filesystem and
  lakehouse instance: empty caches) and warm (the cached listing, revalidated by a version
  probe); `ls(sizes=True)`, which reads every definition;
- `find` over the whole catalog, cold and warm, and `du`, which reads every definition;

through TrinityFileSystem and through fsspec's LocalFileSystem on the plain copy. For the
lakehouse it prints storage requests and files read (`lake.storage.stats`); for plain
files, the entries listed (LocalFileSystem stats every entry it lists).

Run: python benchmarks/bench_fs.py [--tables N] [--namespaces M] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fsspec.implementations.local import LocalFileSystem

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem, content

NO_FSYNC = {"fsync": False}
BATCH = 20_000  # tables per commit while building


def build(root: str, tables: int, namespaces: int, small: int) -> None:
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    lake.create_namespace("big", {"owner": "bench"})
    for start in range(0, tables, BATCH):
        with lake.transaction() as txn:
            for i in range(start, min(tables, start + BATCH)):
                txn.create_table(
                    "big", f"t{i:06d}", {"table_format": "ICEBERG", "properties": {"n": str(i)}}
                )
        print(f"  built {min(tables, start + BATCH)}/{tables} tables", file=sys.stderr)
    with lake.transaction() as txn:
        for n in range(namespaces):
            txn.create_namespace(f"ns{n:03d}")
            for i in range(small):
                txn.create_table(f"ns{n:03d}", f"t{i:03d}", {"table_format": "ICEBERG"})
            txn.create_view(f"ns{n:03d}", "v", {"properties": {"sql": "select 1"}})


def mirror(root: str, plain: str) -> int:
    """The same tree as plain JSON files: <plain>/<namespace>/<name>, the bytes of cat."""
    snap = Lakehouse.open(root, storage_options=NO_FSYNC).snapshot()
    objects = []
    for ref, location in snap.iter_all():
        if ref.name is None:
            os.makedirs(os.path.join(plain, ref.namespace), exist_ok=True)
        else:
            objects.append((ref, location))

    def write(item: tuple[Any, str]) -> int:
        ref, location = item
        data = content.render(ref.kind, snap.read_definition(ref, location))
        with open(os.path.join(plain, ref.namespace, ref.name), "wb") as f:
            f.write(data)
        return len(data)

    with ThreadPoolExecutor(16) as pool:
        return sum(pool.map(write, objects))


def fresh(root: str) -> TrinityFileSystem:
    """A filesystem with cold caches (a new Lakehouse, a new storage cache)."""
    return TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)


def measure(fs: TrinityFileSystem | None, func: Callable[[], Any]) -> tuple[float, Any, dict]:
    stats = fs.lake.storage.stats if fs is not None else None
    if stats is not None:
        stats.reset()
    started = time.perf_counter()
    result = func()
    elapsed = time.perf_counter() - started
    counts = stats.snapshot() if stats is not None else {}
    return elapsed, result, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100_000, help="tables in the big namespace")
    parser.add_argument("--namespaces", type=int, default=20, help="small namespaces")
    parser.add_argument("--small-tables", type=int, default=50, help="tables per small namespace")
    parser.add_argument("--dir", help="work directory (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)

    work = args.dir or tempfile.mkdtemp(prefix="bench-fs-")
    root, plain = os.path.join(work, "lake"), os.path.join(work, "plain")
    try:
        started = time.perf_counter()
        build(root, args.tables, args.namespaces, args.small_tables)
        built = time.perf_counter() - started
        total_bytes = mirror(root, plain)
        objects = args.tables + args.namespaces * (args.small_tables + 1)
        print(
            f"catalog: {args.tables} tables in /big + {args.namespaces} namespaces of "
            f"{args.small_tables} tables and a view = {objects} objects, "
            f"{total_bytes} bytes of JSON (built in {built:.1f} s)\n"
        )

        local = LocalFileSystem()
        rows: list[tuple[str, str, float, str]] = []

        def trinity(label: str, func: Callable[[TrinityFileSystem], Any], fs=None) -> Any:
            fs = fs or fresh(root)
            elapsed, result, c = measure(fs, lambda: func(fs))
            detail = (
                f"{c['requests']} requests, {c['read']} files read "
                f"({c['bytes_read'] / 1e6:.1f} MB), {c['read_cached_hit']} cache hits"
            )
            rows.append(("trinity://", label, elapsed, detail))
            return fs, result

        def plain_fs(label: str, func: Callable[[], Any], entries: Callable[[Any], int]) -> Any:
            elapsed, result, _ = measure(None, func)
            rows.append(
                (
                    "local JSON",
                    label,
                    elapsed,
                    f"{entries(result)} entries listed (one stat each), 0 files read",
                )
            )
            return result

        big = f"{plain}/big"
        fs, names = trinity("ls /big (names), cold", lambda f: f.ls("/big", detail=False))
        assert len(names) == args.tables
        trinity("ls /big (names), warm", lambda f: f.ls("/big", detail=False), fs)
        _, entries = trinity("ls /big (detail), cold", lambda f: f.ls("/big"))
        assert entries[0]["size"] is None
        plain_fs("ls big (detail)", lambda: local.ls(big, detail=True), len)
        plain_fs("ls big (detail), again", lambda: local.ls(big, detail=True), len)
        _, sized = trinity("ls /big sizes=True, cold", lambda f: f.ls("/big", sizes=True))
        assert sum(e["size"] for e in sized) == sum(e["size"] for e in local.ls(big, detail=True))

        fs, found = trinity("find / (whole catalog), cold", lambda f: f.find("/"))
        trinity("find / (whole catalog), warm", lambda f: f.find("/"), fs)
        assert len(found) == objects  # tables and views
        local_found = plain_fs("find (whole tree)", lambda: local.find(plain), len)
        assert len(local_found) == len(found)
        plain_fs("find (whole tree), again", lambda: local.find(plain), len)
        _, du = trinity("du / (reads every definition), cold", lambda f: f.du("/"))
        local_du = plain_fs("du (whole tree)", lambda: local.du(plain), lambda _: len(found))
        assert du == local_du == total_bytes, (du, local_du, total_bytes)

        width = max(len(r[1]) for r in rows)
        print(f"{'':10}  {'operation':{width}}  {'seconds':>8}  details")
        for who, label, elapsed, detail in rows:
            print(f"{who:10}  {label:{width}}  {elapsed:8.3f}  {detail}")
        return 0
    finally:
        if args.keep or args.dir:
            print(f"\nkept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
