"""What the tree tests share: an in-memory node store, an empty root, and random
workloads of creates, replaces and deletes checked against a plain dict."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence

from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore

Changes = dict[str, str | None]


def new_store(order: int) -> NodeStore:
    """A node store of `order` over a fresh memory:// storage."""
    return NodeStore(Storage(f"memory://tree-{uuid.uuid4().hex}"), order)


def empty_root() -> Node:
    """The root of version 0: an empty leaf with the system rows a root needs."""
    root = Node.empty_leaf()
    root.system = {"created_at_millis": "0", "lakehouse_def": "ldef"}
    return root


def random_changes(
    rng: random.Random, version: int, domain: int, sizes: Sequence[int], delete_share: float
) -> Changes:
    """One commit's changes: a size drawn from `sizes`, keys from a domain of `domain`
    (so keys come back), a `delete_share` of them deletes."""
    changes: Changes = {}
    for _ in range(rng.choice(sizes)):
        key = f"k{rng.randrange(domain):04d}"
        changes[key] = None if rng.random() < delete_share else f"v{version}-{key}"
    return changes


def apply_changes(model: dict[str, str], changes: Changes) -> None:
    """What a tree holds after `changes`, applied to the plain dict `model`."""
    for key, value in changes.items():
        if value is None:
            model.pop(key, None)
        else:
            model[key] = value
