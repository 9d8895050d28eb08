"""Sweep of node size and flush caps: bytes a one-table commit writes, at the tree level.

Builds a tree of N table keys (10 namespaces, names spread over the key range by a hash)
bottom-up in memory storage, then runs one-key commits with names drawn from the same
spread and reports, per configuration, the bytes of node files each commit writes (the
new root plus every node a flush rewrote): mean, p99 and max, and the node files a cold
lookup reads. The definition file and the hint (about 0.2 KB together) come on top; the
end-to-end figure is in bench_commits.py. Counts do not depend on the machine.

    python benchmarks/sweep_node_size.py --sizes 100000 --commits 5000 \
        --node-sizes 65536 131072 262144 1048576 --root-caps 8192 16384 32768 \
        --node-caps 65536 131072 1048576 --compression zstd none
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import uuid
from bisect import bisect_left

from trinityfs.format.definitions import buffer_budget_bytes, new_lakehouse_def
from trinityfs.format.keys import KeyCodec
from trinityfs.format.nodefile import encode_node
from trinityfs.format.paths import new_definition_location
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore, TreeWriter
from trinityfs.tree.budget import FlushPolicy
from trinityfs.tree.bulk import BottomUpBuilder

NAMESPACES = [f"ns{j:02d}" for j in range(10)]


def table_name(i: int) -> str:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()


def pair(codec: KeyCodec, i: int) -> tuple[str, str]:
    ns, name = NAMESPACES[i % len(NAMESPACES)], table_name(i)
    # a location only (no file is written): name it after the key's bytes
    return codec.table_key(ns, name), new_definition_location("table", ns, name, name.encode())


def build_base(store: NodeStore, codec: KeyCodec, order: int, n: int, compression) -> Node:
    def emit(node: Node) -> str:
        node.system = {"created_at_millis": "1"}
        location = f"node-{uuid.uuid4()}.arrow"
        data = encode_node(node.to_file(), order, compression=compression)
        store.storage.write_immutable(location, data)
        node.location = location
        store.remember(node)
        return location

    builder = BottomUpBuilder(order, emit)
    for key, value in sorted(pair(codec, i) for i in range(n)):
        builder.add(key, value)
    root = builder.finish()
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef.binpb"}
    return root


def cold_lookup_nodes(root: Node, store: NodeStore, key: str) -> int:
    node, files = root, 1
    while node.children is not None:
        message = node.buffer.get(key)
        if message is not None:
            break
        i = bisect_left(node.keys, key)
        if i < len(node.keys) and node.keys[i] == key:
            break
        node = store.resolve(node.children[i])
        files += 1
    return files


def run(
    n: int,
    commits: int,
    store: NodeStore,
    base: Node,
    node_size: int,
    policy: FlushPolicy,
    compression: str | None,
    window: int = 0,
):
    """One-key commits from `base` with `policy`; bytes written per commit and lookup depth.

    With `window`, also the mean of the last `window` commits (the steady state: buffers
    below the root take thousands of commits to fill, so an early mean understates)."""
    ldef = new_lakehouse_def(node_file_max_size_bytes=node_size)
    codec = KeyCodec.from_lakehouse_def(ldef)
    storage = store.storage
    root = base
    budget = buffer_budget_bytes(ldef)
    sizes: list[int] = []
    for c in range(commits):
        version = c + 2
        key, value = pair(codec, n + c)
        writer = TreeWriter(store, ldef.order, budget, version, policy)
        new_root = writer.commit(root, {key: value})
        new_root.system = dict(root.system)
        before = storage.stats.snapshot()["bytes_written"]
        store.write_new_nodes(new_root, created_at_millis=version, compression=compression)
        nodes_bytes = storage.stats.snapshot()["bytes_written"] - before
        root_bytes = len(encode_node(new_root.to_file(), ldef.order, compression=compression))
        sizes.append(nodes_bytes + root_bytes)
        root = new_root
    last = statistics.mean(sizes[-window:]) if window else float("nan")
    sizes.sort()
    probe = [pair(codec, i)[0] for i in range(0, n, max(1, n // 200))]
    return {
        "mean": statistics.mean(sizes),
        "last": last,
        "p99": sizes[int(len(sizes) * 0.99)],
        "max": sizes[-1],
        "cold_nodes": max(cold_lookup_nodes(root, store, k) for k in probe),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--commits", type=int, default=4000)
    parser.add_argument("--node-sizes", type=int, nargs="+", default=[1 << 20])
    parser.add_argument("--root-caps", type=int, nargs="+", default=[4096, 8192, 16384, 32768])
    parser.add_argument("--node-caps", type=int, nargs="+", default=[32768, 131072, 524288])
    parser.add_argument("--compression", nargs="+", default=["zstd", "none"])
    parser.add_argument(
        "--window", type=int, default=0, help="also the mean of the last WINDOW commits"
    )
    args = parser.parse_args()
    for n in args.sizes:
        print(f"== {n:,} tables, {args.commits} one-table commits ==")
        print(
            f"{'node size':>10} {'root cap':>9} {'node cap':>9} {'files':>6} {'mean B':>9} "
            f"{'p99 B':>9} {'max B':>9} {'cold nodes':>10} {'last-window mean B':>18}"
        )
        for compression in args.compression:
            packed = None if compression == "none" else compression
            for node_size in args.node_sizes:
                ldef = new_lakehouse_def(node_file_max_size_bytes=node_size)
                storage = Storage(f"memory://sweep-base-{uuid.uuid4().hex}")
                store = NodeStore(storage, ldef.order, cached_nodes=1 << 21)
                codec = KeyCodec.from_lakehouse_def(ldef)
                base = build_base(store, codec, ldef.order, n, packed)
                for root_cap in args.root_caps:
                    for node_cap in args.node_caps:
                        policy = FlushPolicy(root_cap, node_cap)
                        r = run(
                            n, args.commits, store, base, node_size, policy, packed, args.window
                        )
                        print(
                            f"{node_size:>10} {root_cap:>9} {node_cap:>9} {compression:>6} "
                            f"{r['mean']:>9.0f} {r['p99']:>9} {r['max']:>9} "
                            f"{r['cold_nodes']:>10} {r['last']:>18.0f}",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
