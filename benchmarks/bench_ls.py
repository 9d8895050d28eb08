"""Cold names-only listing of a namespace of N tables next to a names-only listing of a
plain directory of N files, interleaved in one process (issue 13 item 3), like for like:

- plain: `fsspec.filesystem("file").ls(dir, detail=False)` of a directory holding N
  empty files named like the tables (and `os.listdir`, for reference);
- trinity://: `TrinityFileSystem(root).ls("ns", detail=False)` on a new filesystem
  object (cold: no decoded node, no cached file);
- catalog: `Lakehouse.open(root).list_tables("ns")` (cold), the API under both, and the
  same with the pre-issue key decoding (one `KeyCodec.decode` per key) as its baseline.

Node files read and storage requests are printed next to the times.

    python benchmarks/bench_ls.py --tables 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import fsspec

from trinityfs import Lakehouse
from trinityfs.format.keys import KeyCodec
from trinityfs.fs.spec import TrinityFileSystem

BATCH = 50_000


def build(root: Path, tables: int) -> None:
    lake = Lakehouse.create(str(root), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for start in range(0, tables, BATCH):
        with lake.transaction() as txn:
            for i in range(start, min(tables, start + BATCH)):
                txn.create_table("ns", f"t{i:07d}", {"table_format": "ICEBERG"})
    lake.create_table("ns", "flush")  # merges the last bulk load into the tree


def fill_plain(plain: Path, count: int) -> None:
    """`plain` holding exactly the files t0000000.json ... (count of them)."""
    plain.mkdir(exist_ok=True)
    wanted = {f"t{i:07d}.json" for i in range(count)}
    present = set(os.listdir(plain))
    for name in present - wanted:
        (plain / name).unlink()
    for name in wanted - present:
        (plain / name).touch()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--lake",
        type=Path,
        default=None,
        help="reuse a lake built before (and the plain directory LAKE-plain beside it)",
    )
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = args.lake or Path(tmp) / "lake"
        if args.lake is None or not (root / "_latest_hint.txt").exists():
            build(root, args.tables)
        count = len(Lakehouse.open(str(root)).list_tables("ns"))
        # With --lake the plain directory is kept beside it and reused: creating and
        # deleting 100,000 files per run slows other people's create timings on this
        # VM's ext4 for minutes (docs/sessions/2026-11-24b-helper-notes.md).
        plain = Path(f"{root}-plain") if args.lake else Path(tmp) / "plain"
        fill_plain(plain, count)
        local = fsspec.filesystem("file")

        def plain_ls() -> tuple[int, dict]:
            return len(local.ls(str(plain), detail=False)), {}

        def listdir() -> tuple[int, dict]:
            return len(os.listdir(plain)), {}

        def trinity_ls() -> tuple[int, dict]:
            fs = TrinityFileSystem(str(root), skip_instance_cache=True)
            names = fs.ls("ns", detail=False)
            return len(names), fs.lake.storage.stats.snapshot()

        def catalog_ls() -> tuple[int, dict]:
            lake = Lakehouse.open(str(root))
            names = lake.list_tables("ns")
            return len(names), lake.storage.stats.snapshot()

        def per_key_list() -> tuple[int, dict]:
            """The pre-issue decoding: every key through KeyCodec.decode on its own."""
            saved = KeyCodec.decode_names
            KeyCodec.decode_names = lambda self, kind, ns, keys: [  # type: ignore[method-assign]
                self.decode(k).name for k in keys
            ]
            try:
                return catalog_ls()
            finally:
                KeyCodec.decode_names = saved  # type: ignore[method-assign]

        kinds = {
            "fsspec local ls": plain_ls,
            "os.listdir": listdir,
            "trinity:// ls": trinity_ls,
            "catalog list": catalog_ls,
            "  per-key decode": per_key_list,
        }
        times: dict[str, list[float]] = {k: [] for k in kinds}
        stats: dict[str, dict] = {}
        sizes: dict[str, int] = {}
        for fn in kinds.values():
            fn()  # page cache warm for both sides
        for _ in range(args.rounds):
            for kind, fn in kinds.items():
                start = time.perf_counter()
                sizes[kind], stats[kind] = fn()
                times[kind].append(time.perf_counter() - start)
        base = statistics.median(times["fsspec local ls"])
        print(f"\ncold names-only listing, {count:,} names, median of {args.rounds} rounds")
        print(
            f"{'kind':<16} {'names':>8} {'seconds':>8} {'x fsspec':>9} {'reads':>6} {'requests':>9}"
        )
        for kind in kinds:
            med = statistics.median(times[kind])
            st = stats[kind]
            reads = st.get("read", "-")
            req = st.get("requests", "-")
            print(
                f"{kind:<16} {sizes[kind]:8,d} {med:8.3f} {med / base:9.2f} {reads!s:>6} {req!s:>9}"
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
