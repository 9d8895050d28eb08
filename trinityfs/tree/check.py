"""Whole-tree verification of the invariants of FORMAT.md section 4.

Tests call `check_tree` after every mutation sequence; fsck calls it for every kept
version. It collects every problem instead of stopping at the first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trinityfs.errors import TreeInvariantError, TrinityError
from trinityfs.format.keys import KEY_CREATED_AT_MILLIS, KEY_LAKEHOUSE_DEF, KEY_PREVIOUS_ROOT
from trinityfs.tree.budget import buffer_bytes
from trinityfs.tree.node import Node
from trinityfs.tree.store import NodeStore


@dataclass
class TreeStats:
    nodes: int = 0
    depth: int = 0
    keys: int = 0
    messages: int = 0


def check_tree(store: NodeStore, root: Node, *, order: int, budget: int, version: int) -> TreeStats:
    """Verify the tree under `root` (the root of `version`); raise TreeInvariantError."""
    problems: list[str] = []
    stats = TreeStats()
    min_keys = math.ceil(order / 2) - 1
    leaf_depths: set[int] = set()
    seen: set[str] = set()

    def where(node: Node) -> str:
        return node.location or "<new node>"

    def visit(node: Node, lo: str | None, hi: str | None, depth: int, above: dict[str, int]):
        is_root = node is root
        stats.nodes += 1
        stats.keys += len(node.keys)
        stats.messages += len(node.buffer)
        name = where(node)
        if node.location is not None and not is_root:
            if node.location in seen:  # checked once: a node that names an ancestor ends here
                problems.append(f"{name}: node reachable twice")
                return
            seen.add(node.location)
        n_keys = node.system.get("n_keys")
        if n_keys is not None and n_keys != str(len(node.keys)):
            problems.append(f"{name}: n_keys {n_keys} but {len(node.keys)} keys")
        if len(node.keys) > order - 1:
            problems.append(f"{name}: {len(node.keys)} keys, more than order-1 = {order - 1}")
        if len(node.values) != len(node.keys):
            problems.append(f"{name}: {len(node.keys)} keys but {len(node.values)} values")
        for a, b in zip(node.keys, node.keys[1:], strict=False):
            if not a < b:
                problems.append(f"{name}: keys out of order: {a!r} before {b!r}")
        for k in node.keys:
            if (lo is not None and k <= lo) or (hi is not None and k >= hi):
                problems.append(f"{name}: key {k!r} outside its range ({lo!r}, {hi!r})")
        for k, (_value, txn) in node.buffer.items():
            if (lo is not None and k <= lo) or (hi is not None and k >= hi):
                problems.append(f"{name}: message for {k!r} outside range ({lo!r}, {hi!r})")
            if txn > version:
                problems.append(f"{name}: message for {k!r} from future version {txn}")
            if not is_root and txn >= version:
                problems.append(f"{name}: message of the latest version {txn} below the root")
            if k in above and txn > above[k]:
                problems.append(f"{name}: message for {k!r} newer than one above it")
        size = buffer_bytes(node.buffer)
        if is_root:
            if size > budget and any(t < version for _v, t in node.buffer.values()):
                problems.append(f"{name}: root buffer {size} B over budget {budget} B")
        elif size > budget:
            problems.append(f"{name}: buffer {size} B over budget {budget} B")
        if node.is_leaf:
            leaf_depths.add(depth)
            if not is_root and node.buffer:
                problems.append(f"{name}: a non-root leaf has a write buffer")
            if not is_root and len(node.keys) < min_keys:
                problems.append(f"{name}: leaf with {len(node.keys)} keys, fewer than {min_keys}")
            return
        children = node.children
        if len(children) != len(node.keys) + 1:
            problems.append(f"{name}: {len(node.keys)} keys but {len(children)} children")
            return
        need = 2 if is_root else math.ceil(order / 2)
        if len(children) < need:
            problems.append(f"{name}: {len(children)} children, fewer than {need}")
        below = dict(above)
        for k, (_v, txn) in node.buffer.items():
            below[k] = txn
        bounds = [lo, *node.keys, hi]
        for i, ref in enumerate(children):
            try:
                child = store.resolve(ref)
            except TrinityError as exc:
                problems.append(f"{name}: child {i} unreadable: {exc}")
                continue
            visit(child, bounds[i], bounds[i + 1], depth + 1, below)

    for key in (KEY_CREATED_AT_MILLIS, KEY_LAKEHOUSE_DEF):
        if key not in root.system:
            problems.append(f"root of version {version}: no {key} row")
    if version > 0 and KEY_PREVIOUS_ROOT not in root.system:
        problems.append(f"root of version {version}: no previous_root row")
    visit(root, None, None, 0, {})
    if len(leaf_depths) > 1:
        problems.append(f"leaves at different depths: {sorted(leaf_depths)}")
    stats.depth = max(leaf_depths, default=0)
    if problems:
        raise TreeInvariantError(problems)
    return stats
