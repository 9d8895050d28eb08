"""What a cold point lookup reads: node files, bytes and storage requests.

Opens an existing lakehouse afresh for each probe (a new process-level state: no
decoded node, no cached file) and describes one table, counting from the open on:
storage requests, bytes read, and each file read (node files apart from the rest: the
hint, the oldest marker, the lakehouse definition and the table's definition). Probes
are spread over the key range; tables named as bench_commits.py names them, so a lake
it built (`--lakes DIR`, e.g. DIR/new-1000000-order256) can be measured after its run:

    python benchmarks/cold_lookup.py --lake /tmp/lakes/new-1000000-order256 --tables 1000000

Counts do not depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics

from bench_commits import NAMESPACES, spread_name

from trinityfs import Lakehouse


def cold_lookup(url: str, i: int) -> dict[str, int]:
    """One cold describe of table i: requests, bytes read, node files and their bytes."""
    lake = Lakehouse.open(url)
    reads: list[tuple[str, int]] = []
    backend = lake.storage.backend
    real_read = backend.read

    def recording_read(loc: str) -> bytes:
        data = real_read(loc)
        reads.append((loc, len(data)))
        return data

    backend.read = recording_read  # type: ignore[method-assign]
    try:
        lake.describe_table(NAMESPACES[i % len(NAMESPACES)], spread_name(i))
    finally:
        backend.read = real_read  # type: ignore[method-assign]
    stats = lake.storage.stats.snapshot()
    node_reads = [size for loc, size in reads if loc.endswith(".arrow")]
    return {
        "requests": stats["requests"],
        "bytes_read": stats["bytes_read"],
        "node_files": len(node_reads),
        "node_bytes": sum(node_reads),
        "other_files": len(reads) - len(node_reads),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", required=True, help="lakehouse URL or directory")
    parser.add_argument("--tables", type=int, required=True, help="tables bench_commits built")
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()
    # the table names bench_commits created: 0..tables-1 (its commits add more)
    rows = [
        cold_lookup(args.lake, i) for i in range(0, args.tables, max(1, args.tables // args.probes))
    ]
    print(f"{len(rows)} cold lookups of {args.lake}:")
    for name in ("node_files", "node_bytes", "other_files", "bytes_read", "requests"):
        values = [r[name] for r in rows]
        print(
            f"  {name:>11}: mean {statistics.mean(values):>12,.1f}  min {min(values):>10,}  "
            f"max {max(values):>10,}"
        )


if __name__ == "__main__":
    main()
