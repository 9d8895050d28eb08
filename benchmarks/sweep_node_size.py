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

With --orders, the trees of each order (node size and caps: trinityfs's defaults for a new
lakehouse of that order) take the same commits interleaved, one key at a time, and the
mean of each block of --window commits is printed as it completes (so a run cut short
still gives its trend); the tree's bytes after the build stand for the commit after a
bulk load, which rebuilds the whole tree bottom-up:

    python benchmarks/sweep_node_size.py --sizes 1000000 --commits 30000 --window 5000 \
        --orders 128 256 512
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import uuid
from bisect import bisect_left

from trinityfs.format.definitions import (
    buffer_budget_bytes,
    new_lakehouse_def,
    node_file_compression,
)
from trinityfs.format.keys import KeyCodec
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import new_definition_location
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore, TreeWriter
from trinityfs.tree.budget import (
    DEFAULT_ROOT_BUFFER_BYTES,
    DEFAULT_ROOT_CAP_CHILDREN,
    FlushPolicy,
    new_lakehouse_options,
)
from trinityfs.tree.bulk import BottomUpBuilder
from trinityfs.tree.store import _new_nodes_bottom_up

NAMESPACES = [f"ns{j:02d}" for j in range(10)]


def table_name(i: int) -> str:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()


def pair(codec: KeyCodec, i: int) -> tuple[str, str]:
    ns, name = NAMESPACES[i % len(NAMESPACES)], table_name(i)
    # a location only (no file is written): name it after the key's bytes
    return codec.table_key(ns, name), new_definition_location("table", ns, name, name.encode())


class LevelFillBuilder(BottomUpBuilder):
    """A bottom-up builder with one fill per level (leaves first; the last repeats):
    a bulk-built stand-in for a tree that random inserts have already split, e.g.
    full leaves under half-full internal nodes, without running the commits."""

    def __init__(self, order: int, emit, fills: list[float]) -> None:
        super().__init__(order, emit, 1.0)
        self.fills = [max(self.min_keys, 1, math.floor(self.max_keys * f)) for f in fills]

    def _cut_ready(self, i: int) -> None:
        self.fill = self.fills[min(i, len(self.fills) - 1)]
        super()._cut_ready(i)


def build_base(
    store: NodeStore,
    codec: KeyCodec,
    order: int,
    n: int,
    compression,
    fill: float | list[float] = 1.0,
    prefill: int = 0,
) -> Node:
    """`prefill`: bytes (message estimate) of updates to random keys below it put in the
    buffer of every node just above the leaves, as if commits had flushed there."""
    rng = random.Random(0)

    def emit(node: Node) -> str:
        if prefill and node.children is not None:
            below = [store.resolve(c) for c in node.children]
            if all(c.is_leaf for c in below):
                while node.buffer.nbytes < prefill:
                    leaf = rng.choice(below)
                    j = rng.randrange(len(leaf.keys))
                    node.buffer[leaf.keys[j]] = (leaf.values[j], 1)
        node.system = {"created_at_millis": "1"}
        location = f"node-{uuid.uuid4()}.arrow"
        data = encode_node(node.to_file(), order, compression=compression)
        store.storage.write_immutable(location, data)
        node.location = location
        store.remember(node)
        return location

    builder = (
        LevelFillBuilder(order, emit, fill)
        if isinstance(fill, list)
        else BottomUpBuilder(order, emit, fill)
    )
    for key, value in sorted(pair(codec, i) for i in range(n)):
        builder.add(key, value)
    root = builder.finish()
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef.binpb"}
    return root


def cold_lookup_nodes(root: Node, store: NodeStore, key: str) -> int:
    return cold_lookup_path(root, store, key)[0]


def cold_lookup_path(root: Node, store: NodeStore, key: str) -> tuple[int, int]:
    """Node files a cold lookup of `key` reads, and the bytes of those below the root."""
    node, files, nbytes = root, 1, 0
    while node.children is not None:
        message = node.buffer.get(key)
        if message is not None:
            break
        i = bisect_left(node.keys, key)
        if i < len(node.keys) and node.keys[i] == key:
            break
        child = node.children[i]
        if isinstance(child, str):
            nbytes += store.storage.size(child)
        node = store.resolve(child)
        files += 1
    return files, nbytes


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


class OrderRun:
    """One tree of a given order, defaults of a new lakehouse, advanced one commit at a time."""

    def __init__(
        self,
        n: int,
        order: int,
        redistribute: bool = False,
        root_cap: int | None = None,
        fill: float | list[float] = 1.0,
        prefill: int = 0,
        root_cap_children: int | None = None,
    ) -> None:
        self.redistribute = redistribute
        self.ldef = new_lakehouse_def(**new_lakehouse_options({"order": order}))
        self.compression = node_file_compression(self.ldef)
        self.storage = Storage(f"memory://sweep-order-{uuid.uuid4().hex}")
        self.store = NodeStore(self.storage, order, cached_nodes=1 << 21)
        self.codec = KeyCodec.from_lakehouse_def(self.ldef)
        self.root = build_base(self.store, self.codec, order, n, self.compression, fill, prefill)
        root_bytes = len(encode_node(self.root.to_file(), order, compression=self.compression))
        self.build_bytes = self.storage.stats.snapshot()["bytes_written"] + root_bytes
        self.base_root_bytes = root_bytes
        self.policy = FlushPolicy(
            root_buffer_bytes=DEFAULT_ROOT_BUFFER_BYTES if root_cap is None else root_cap,
            root_cap_children=(
                DEFAULT_ROOT_CAP_CHILDREN if root_cap_children is None else root_cap_children
            ),
        )
        self.budget = buffer_budget_bytes(self.ldef)
        self.sizes: list[int] = []
        self.root_sizes: list[int] = []
        # per commit: (internal nodes, their bytes, leaves, their bytes) written
        self.below: list[tuple[int, int, int, int]] = []

    def commit(self, version: int, key: str, value: str) -> None:
        order = self.ldef.order
        writer = TreeWriter(self.store, order, self.budget, version, self.policy)
        writer.redistribute = self.redistribute
        new_root = writer.commit(self.root, {key: value})
        new_root.system = dict(self.root.system)
        new_nodes = _new_nodes_bottom_up(new_root)
        before = self.storage.stats.snapshot()["bytes_written"]
        self.store.write_new_nodes(
            new_root, created_at_millis=version, compression=self.compression
        )
        nodes_bytes = self.storage.stats.snapshot()["bytes_written"] - before
        inner = [self.storage.size(x.location) for x in new_nodes if not x.is_leaf]
        leaves = [self.storage.size(x.location) for x in new_nodes if x.is_leaf]
        self.below.append((len(inner), sum(inner), len(leaves), sum(leaves)))
        root_bytes = len(encode_node(new_root.to_file(), order, compression=self.compression))
        self.sizes.append(nodes_bytes + root_bytes)
        self.root_sizes.append(root_bytes)
        self.root = new_root

    def cold_nodes(self, n: int) -> int:
        probe = [pair(self.codec, i)[0] for i in range(0, n, max(1, n // 200))]
        return max(cold_lookup_nodes(self.root, self.store, k) for k in probe)

    def cold_bytes(self, n: int) -> tuple[float, int]:
        """Mean and max bytes of the node files a cold lookup reads (the root included)."""
        probe = [pair(self.codec, i)[0] for i in range(0, n, max(1, n // 200))]
        root = self.root_sizes[-1] if self.root_sizes else self.base_root_bytes
        paths = [root + cold_lookup_path(self.root, self.store, k)[1] for k in probe]
        return statistics.mean(paths), max(paths)


def run_orders(n: int, commits: int, orders: list[str], window: int) -> None:
    """`orders`: e.g. "128" (plain splits), "128r" for B*-style rebalancing
    (TreeWriter.redistribute: rotations into a neighbour with room, plain splits when
    both are full); "/CAP" for a root buffer cap other than the default ("256r/32768");
    "/CAP:C" for a cap that grows as sqrt(root children / C) above C children
    (FlushPolicy.root_cap_children; C = 0: a fixed cap; default: the policy's);
    "@FILL" for a bulk-built tree whose nodes are FILL full ("256r@0.9"; default 1.0),
    or one fill per level, leaves first, the last repeated ("128@1.0:0.55"); "~BYTES"
    after the fill prefills the buffers above the leaves ("128@1.0:0.55~40000")."""
    runs = {}
    for order in orders:
        spec, _, cap = order.partition("/")
        cap, _, cap_children = cap.partition(":")
        spec, _, fill = spec.partition("@")
        fill, _, prefill = fill.partition("~")
        r = OrderRun(
            n,
            int(spec.rstrip("r")),
            redistribute=spec.endswith("r"),
            root_cap=int(cap) if cap else None,
            root_cap_children=int(cap_children) if cap_children else None,
            fill=(
                [float(f) for f in fill.split(":")] if ":" in fill else float(fill) if fill else 1.0
            ),
            prefill=int(prefill or 0),
        )
        runs[order] = r
        print(
            f"order {order}: node size {r.ldef.node_file_max_size_bytes} B, buffer budget "
            f"{r.budget} B (root cap {r.policy.root_cap(r.budget)}"
            f"{f' x sqrt(children / {k})' if (k := r.policy.root_cap_children) else ''}"
            f" = {r.policy.root_cap(r.budget, len(r.root.children or ()))} now, node cap "
            f"{r.policy.node_cap(r.budget)}), built tree {r.build_bytes:,} B "
            f"(~ the commit after a bulk load), root {r.base_root_bytes:,} B with "
            f"{len(r.root.keys)} keys, cold nodes {r.cold_nodes(n)}",
            flush=True,
        )
    codec = runs[orders[0]].codec
    window = window or commits
    for c in range(commits):
        key, value = pair(codec, n + c)
        for r in runs.values():
            r.commit(c + 2, key, value)
        if (c + 1) % window == 0:
            for order, r in runs.items():
                block, roots = r.sizes[-window:], r.root_sizes[-window:]
                below = r.below[-window:]
                inner_n, inner_b, leaf_n, leaf_b = (sum(x[j] for x in below) for j in range(4))
                print(
                    f"  commits {c + 2 - window:>7,}-{c + 1:<7,} order {order:>10}: mean "
                    f"{statistics.mean(block) / 1000:6.1f} KB, max {max(block) / 1000:6.1f} KB, "
                    f"root mean {statistics.mean(roots) / 1000:5.1f} KB, root keys "
                    f"{len(r.root.keys)}, cold nodes {r.cold_nodes(n)}; per commit: "
                    f"internal {inner_n / window:.3f} files {inner_b / window / 1000:.1f} KB "
                    f"({inner_b / max(inner_n, 1) / 1000:.1f} KB each), leaves "
                    f"{leaf_n / window:.3f} files {leaf_b / window / 1000:.1f} KB "
                    f"({leaf_b / max(leaf_n, 1) / 1000:.1f} KB each)",
                    flush=True,
                )
    print(f"== {n:,} tables, {commits:,} one-table commits, orders interleaved ==")
    print(
        f"{'order':>10} {'mean KB':>8} {'last KB':>8} {'p99 KB':>7} {'max KB':>7} "
        f"{'root keys':>9} {'cold nodes':>10} {'cold KB mean/max':>16}"
    )
    for order, r in runs.items():
        sizes = sorted(r.sizes)
        cold_mean, cold_max = r.cold_bytes(n)
        print(
            f"{order:>10} {statistics.mean(sizes) / 1000:>8.1f} "
            f"{statistics.mean(r.sizes[-window:]) / 1000:>8.1f} "
            f"{sizes[int(len(sizes) * 0.99)] / 1000:>7.1f} {sizes[-1] / 1000:>7.1f} "
            f"{len(r.root.keys):>9} {r.cold_nodes(n):>10} "
            f"{cold_mean / 1000:>8.1f}/{cold_max / 1000:<7.1f}",
            flush=True,
        )


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
    parser.add_argument(
        "--orders",
        nargs="+",
        default=None,
        help="compare these orders (new-lakehouse defaults each), commits interleaved; "
        "a suffix r (128r) rebalances B*-style (TreeWriter.redistribute: rotations, "
        "plain splits when the neighbours are full), /CAP sets the root buffer cap "
        "(256r/32768), @FILL the fill of the bulk-built tree (256r@0.9)",
    )
    args = parser.parse_args()
    if args.orders:
        for n in args.sizes:
            run_orders(n, args.commits, args.orders, args.window)
        return
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
