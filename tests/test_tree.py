"""The B-epsilon tree on its own: random commits against a dict model, every invariant
checked after every commit, every earlier version still reading as it was."""

from __future__ import annotations

import random

import pytest
from tree_workloads import apply_changes, empty_root, new_store, random_changes

from trinityfs.errors import TreeInvariantError
from trinityfs.format.node_encode import encode_node
from trinityfs.tree import Node, NodeStore, TreeWriter, check_tree, lookup, scan, scan_prefix


def commit(store: NodeStore, root: Node, changes: dict, version: int, budget: int) -> Node:
    new = TreeWriter(store, store.order, budget, version).commit(root, changes)
    new.system = {"created_at_millis": str(version), "lakehouse_def": "ldef", "previous_root": "p"}
    store.write_new_nodes(new)
    encode_node(new.to_file(), store.order)  # the root must always be encodable
    return new


@pytest.mark.parametrize(
    ("order", "budget"),
    [(3, 10), (3, 150), (4, 200), (5, 700), (16, 2_000), (128, 4_000)],
)
def test_random_commits_keep_invariants_and_history(order: int, budget: int) -> None:
    rng = random.Random(order * 1000 + budget)
    store = new_store(order)
    root, model = empty_root(), {}
    history = [(root, dict(model))]
    for version in range(1, 90):
        changes = random_changes(rng, version, 300, [1, 1, 3, 10, 60], 0.35)
        root = commit(store, root, changes, version, budget)
        apply_changes(model, changes)
        check_tree(store, root, order=order, budget=budget, version=version)
        assert dict(scan(store, root)) == model
        for key in list(changes)[:5]:
            assert lookup(store, root, key) == model.get(key)
        history.append((root, dict(model)))
    for old_root, old_model in history:
        assert dict(scan(store, old_root)) == old_model


def test_latest_messages_stay_in_the_root() -> None:
    store = new_store(4)
    root = empty_root()
    for version in range(1, 40):
        changes = {f"k{version:03d}": "x", f"k{version + 100:03d}": "y"}
        root = commit(store, root, changes, version, 60)
        own = {k for k, (_v, t) in root.buffer.items() if t == version}
        assert own == {f"k{version:03d}", f"k{version + 100:03d}"}
        check_tree(store, root, order=4, budget=60, version=version)


def test_range_scan_bounds_and_pagination() -> None:
    store = new_store(5)
    root = empty_root()
    keys = [f"{p}{i:03d}" for p in "abc" for i in range(40)]
    for version, chunk in enumerate([keys[i : i + 7] for i in range(0, len(keys), 7)], start=1):
        root = commit(store, root, {k: k.upper() for k in chunk}, version, 300)
    assert [k for k, _ in scan_prefix(store, root, "b")] == [f"b{i:03d}" for i in range(40)]
    assert [k for k, _ in scan_prefix(store, root, "b", after="b010")][:2] == ["b011", "b012"]
    assert [k for k, _ in scan(store, root, "a038", "b002")] == ["a038", "a039", "b000", "b001"]


def test_bulk_load_writes_each_node_once() -> None:
    store = new_store(16)
    root = empty_root()
    changes = {f"key{i:06d}": f"value{i}" for i in range(20_000)}
    root = commit(store, root, changes, 1, 2_000)  # all stay in the root buffer
    before = store.storage.stats.snapshot()["write"]
    root = commit(store, root, {"zzz": "last"}, 2, 2_000)  # flushes 20,000 messages
    written = store.storage.stats.snapshot()["write"] - before
    stats = check_tree(store, root, order=16, budget=2_000, version=2)
    assert stats.keys + stats.messages >= 20_000
    assert written == stats.nodes - 1  # every node below the root written exactly once
    assert dict(scan(store, root)) == {**changes, "zzz": "last"}


def test_check_reports_broken_trees() -> None:
    store = new_store(4)
    root = empty_root()
    for version in range(1, 40):
        root = commit(store, root, {f"k{version:03d}": "v"}, version, 40)
    check_tree(store, root, order=4, budget=40, version=39)
    assert len(root.keys) >= 2  # so reversing them breaks the order
    broken = root.copy()
    broken.keys = list(reversed(broken.keys))
    with pytest.raises(TreeInvariantError, match="out of order"):
        check_tree(store, broken, order=4, budget=40, version=39)
    with pytest.raises(TreeInvariantError, match="future version"):
        check_tree(store, root, order=4, budget=40, version=3)
    no_system = root.copy()
    no_system.system = {}
    with pytest.raises(TreeInvariantError, match="created_at_millis"):
        check_tree(store, no_system, order=4, budget=40, version=39)
