"""The writer's flush policy and buffer accounting: what one commit may rewrite.

FORMAT.md bounds buffers only from above; the writer flushes earlier (FlushPolicy) so a
commit rewrites kilobytes, not the node size. Buffers keep their byte size as they
change instead of re-summing it on every commit.
"""

from __future__ import annotations

import math
import random
import uuid

import pytest
from tree_workloads import apply_changes, empty_root, new_store, random_changes

from trinityfs.format.node_encode import encode_node
from trinityfs.tree import Node, NodeStore, TreeWriter, check_tree, lookup, scan
from trinityfs.tree.budget import FlushPolicy, MessageBuffer, buffer_bytes, message_bytes
from trinityfs.tree.bulk import BottomUpBuilder, build_tree
from trinityfs.tree.writer import BULK_FILL


def commit(store, root, changes, version, budget, policy=None) -> tuple[Node, int]:
    """Commit and return the new root and the bytes of node files the commit wrote."""
    new = TreeWriter(store, store.order, budget, version, policy).commit(root, changes)
    new.system = {"created_at_millis": str(version), "lakehouse_def": "ldef", "previous_root": "p"}
    before = store.storage.stats.snapshot()["bytes_written"]
    store.write_new_nodes(new)
    written = store.storage.stats.snapshot()["bytes_written"] - before
    return new, written + len(encode_node(new.to_file(), store.order))


def resum(buffer) -> int:
    return sum(message_bytes(k, m) for k, m in buffer.items())


def test_message_buffer_keeps_its_size_through_every_mutation() -> None:
    rng = random.Random(7)
    buf = MessageBuffer()
    for step in range(3000):
        key = f"k{rng.randrange(200):03d}" * rng.choice([1, 3])
        op = rng.randrange(8)
        value = None if rng.random() < 0.2 else "v" * rng.randrange(1, 40)
        if op == 0:
            buf[key] = (value, step)
        elif op == 1 and key in buf:
            del buf[key]
        elif op == 2:
            buf.pop(key, None)
        elif op == 3:
            buf.setdefault(key, (value, step))
        elif op == 4:
            buf.update({key: (value, step), key + "x": (None, step)})
        elif op == 5 and buf:
            buf.popitem()
        elif op == 6:
            buf |= {key: (value, step)}
        else:
            twin = buf.copy()
            assert isinstance(twin, MessageBuffer) and twin.nbytes == buf.nbytes
            twin[key + "y"] = ("z", step)
            assert twin.nbytes != buf.nbytes or key + "y" in buf
        assert buf.nbytes == resum(buf), f"step {step} op {op}"
    buf.clear()
    assert buf.nbytes == 0 == len(buf)
    with pytest.raises(KeyError):
        buf.pop("missing")


def test_nodes_always_carry_a_sized_buffer() -> None:
    node = Node(keys=[], values=[], children=None, buffer={"a": ("x", 1), "b": (None, 2)})
    assert isinstance(node.buffer, MessageBuffer)
    assert buffer_bytes(node.buffer) == resum(node.buffer)
    assert node.copy().buffer.nbytes == node.buffer.nbytes


def test_policy_caps_never_exceed_the_format_budget() -> None:
    policy = FlushPolicy(root_buffer_bytes=5000, node_buffer_bytes=9000)
    assert policy.root_cap(1000) == 1000 and policy.node_cap(1000) == 1000
    assert policy.root_cap(10**6) == 5000 and policy.node_cap(10**6) == 9000
    with pytest.raises(ValueError):
        FlushPolicy(root_buffer_bytes=-1)


def test_root_cap_grows_with_the_square_root_of_the_fan_out_when_asked() -> None:
    fixed = FlushPolicy(root_buffer_bytes=16384, root_cap_children=0)
    assert fixed.root_cap(10**6, 500) == 16384  # 0: a fixed cap
    scaled = FlushPolicy(root_buffer_bytes=16384, root_cap_children=24)
    assert [scaled.root_cap(10**6, c) for c in (0, 10, 24, 96, 216)] == [
        16384,
        16384,
        16384,
        32768,
        49152,
    ]
    assert scaled.root_cap(20000, 216) == 20000  # still bounded by the format's budget
    with pytest.raises(ValueError):
        FlushPolicy(root_cap_children=-1)


def test_a_root_cap_scaled_by_fan_out_lets_a_wide_root_keep_more() -> None:
    """The writer asks the policy with the root's fan-out: a root of many children holds
    more messages before it flushes than with the fixed cap, and never more than its cap."""
    store = new_store(4)
    fixed = FlushPolicy(root_buffer_bytes=600, node_buffer_bytes=10**9, root_cap_children=0)
    scaled = FlushPolicy(root_buffer_bytes=600, node_buffer_bytes=10**9, root_cap_children=1)
    largest = {}
    for name, policy in (("fixed", fixed), ("scaled", scaled)):
        root, largest[name] = empty_root(), 0
        for v in range(300):
            changes = {f"k{(v * 7919) % 1000:04d}": f"v{v}"}
            root, _ = commit(store, root, changes, v + 2, 10**9, policy)
            check_tree(store, root, order=4, budget=10**9, version=v + 2)
            assert root.buffer.nbytes <= policy.root_cap(10**9, len(root.children or ()))
            largest[name] = max(largest[name], root.buffer.nbytes)
    assert largest["fixed"] <= 600 < largest["scaled"]


@pytest.mark.parametrize(
    ("order", "budget", "root_cap", "node_cap", "rebuild"),
    [
        (3, 5_000, 0, 100, 10**9),
        (4, 5_000, 300, 900, 10**9),
        (16, 50_000, 2_000, 6_000, 10**9),
        (64, 10**6, 4_000, 20_000, 10**9),
        (3, 5_000, 200, 500, 6),
        (5, 5_000, 0, 700, 1),
        (16, 50_000, 2_000, 6_000, 30),
    ],
)
def test_random_commits_under_a_policy_keep_invariants(
    order, budget, root_cap, node_cap, rebuild
) -> None:
    rng = random.Random(order + root_cap + rebuild)
    policy = FlushPolicy(root_cap, node_cap, rebuild)
    store = new_store(order)
    root, model = empty_root(), {}
    history = []
    for version in range(1, 120):
        changes = random_changes(rng, version, 600, [1, 1, 2, 8, 40], 0.3)
        root, _ = commit(store, root, changes, version, budget, policy)
        apply_changes(model, changes)
        # The writer's caps hold wherever FORMAT.md's budget would (root: older messages).
        check_tree(store, root, order=order, budget=budget, version=version)
        older = {k: m for k, m in root.buffer.items() if m[1] < version}
        if older:
            assert root.buffer.nbytes <= max(root_cap, resum(root.buffer) - resum(older))
        assert dict(scan(store, root)) == model
        history.append((root, dict(model)))
    for old_root, old_model in history[::10]:
        assert dict(scan(store, old_root)) == old_model


def test_root_buffer_stays_at_the_policy_cap_not_the_node_size() -> None:
    """The bug of issue 13: with a 1 MiB node size every commit rewrote a ~1 MB root."""
    order, budget = 128, 1048576 - 128 * 404
    store = new_store(order)
    rng = random.Random(3)
    keys = sorted(f"C===ns{rng.getrandbits(64):016x}".ljust(204) for _ in range(20_000))
    root = build_tree(((k, f"loc/{i}.binpb") for i, k in enumerate(keys)), order, _emit(store))
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef", "previous_root": "p"}
    policy = FlushPolicy(root_buffer_bytes=8192, node_buffer_bytes=65536)
    written = []
    for version in range(2, 600):
        key = f"C===ns{rng.getrandbits(64):016x}".ljust(204)
        root, nbytes = commit(
            store, root, {key: f"loc/new{version}.binpb"}, version, budget, policy
        )
        written.append(nbytes)
        assert root.buffer.nbytes <= 8192 + message_bytes(key, root.buffer[key])
    check_tree(store, root, order=order, budget=budget, version=version)
    # The root alone (key table + at most 8 KiB of messages) bounds most commits.
    assert sum(written) / len(written) < 64 * 1024
    assert max(written) < 512 * 1024


def _emit(store: NodeStore):
    def emit(node: Node) -> str:
        node.system = {"created_at_millis": "1"}
        location = f"node-{uuid.uuid4()}.arrow"
        store.storage.write_immutable(location, encode_node(node.to_file(), store.order))
        node.location = location
        store.remember(node)
        return location

    return emit


@pytest.mark.parametrize("order", [3, 4, 5, 8, 128])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 17, 100, 1000, 5000])
def test_bottom_up_build_gives_a_valid_tree(order: int, n: int) -> None:
    store = new_store(order)
    pairs = [(f"k{i:06d}", f"v{i}") for i in range(n)]
    root = build_tree(iter(pairs), order, _emit(store))
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef", "previous_root": "p"}
    check_tree(store, root, order=order, budget=10**6, version=1)
    assert list(scan(store, root)) == pairs
    for key, value in pairs[:: max(1, n // 50)]:
        assert lookup(store, root, key) == value


def test_bottom_up_build_holds_a_bounded_number_of_entries() -> None:
    order = 8
    store = new_store(order)
    builder = BottomUpBuilder(order, _emit(store))
    most = 0
    for i in range(20_000):
        builder.add(f"k{i:06d}", "v")
        most = max(most, sum(len(level.keys) for level in builder.levels))
    assert most <= (2 * (order - 1) + 2) * len(builder.levels)
    root = builder.finish()
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef", "previous_root": "p"}
    check_tree(store, root, order=order, budget=10**6, version=1)


def test_bottom_up_build_refuses_unsorted_keys() -> None:
    builder = BottomUpBuilder(4, lambda node: "x")
    builder.add("b", "1")
    with pytest.raises(ValueError, match="strictly ascending"):
        builder.add("a", "2")


def test_a_bulk_load_is_merged_into_the_tree_bottom_up() -> None:
    order = 8
    store = new_store(order)
    keys = [f"k{i:05d}" for i in range(0, 6000, 2)]
    root = build_tree(((k, "old") for k in keys), order, _emit(store))
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef", "previous_root": "p"}
    policy = FlushPolicy(10**9, 10**9, rebuild_messages=100)
    bulk = {f"k{i:05d}": f"new{i}" for i in range(1, 6000, 3)}  # inserts and overwrites
    bulk.update({f"k{i:05d}": None for i in range(0, 6000, 10)})  # deletes
    root, _ = commit(store, root, bulk, 2, 10**9, policy)
    assert len(root.buffer) == len(bulk)  # the bulk commit's own messages stay in the root
    root, _ = commit(store, root, {"zzz": "last"}, 3, 10**9, policy)
    assert set(root.buffer) == {"zzz"}  # the next commit merged them into the tree
    check_tree(store, root, order=order, budget=10**9, version=3)
    model = dict.fromkeys(keys, "old")
    for k, v in bulk.items():
        if v is None:
            model.pop(k, None)
        else:
            model[k] = v
    model["zzz"] = "last"
    assert dict(scan(store, root)) == dict(sorted(model.items()))


def _levels(store: NodeStore, root: Node) -> list[list[int]]:
    """Key counts of the non-root nodes, level by level from the top, left to right."""
    levels: list[list[int]] = []
    frontier = [store.resolve(c) for c in root.children or ()]
    while frontier:
        levels.append([len(node.keys) for node in frontier])
        frontier = [store.resolve(c) for node in frontier for c in node.children or ()]
    return levels


@pytest.mark.parametrize("order", [3, 4, 5, 8, 11, 64])
@pytest.mark.parametrize("fill", [0.1, 0.5, 0.75, 0.9, 1.0])
@pytest.mark.parametrize("n", [0, 1, 7, 100, 2000])
def test_bottom_up_build_fills_nodes_to_the_fill_factor(order: int, fill: float, n: int) -> None:
    """Every node but the last two of each level holds floor(fill * (order-1)) keys
    (never fewer than the minimum fill); the tree is valid and reads back whole."""
    store = new_store(order)
    pairs = [(f"k{i:06d}", f"v{i}") for i in range(n)]
    root = build_tree(iter(pairs), order, _emit(store), fill=fill)
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef", "previous_root": "p"}
    check_tree(store, root, order=order, budget=10**6, version=1)
    assert list(scan(NodeStore(store.storage, order), root)) == pairs  # from the files
    target = max(math.ceil(order / 2) - 1, 1, math.floor((order - 1) * fill))
    for level in _levels(store, root):
        assert level[:-2] == [target] * (len(level) - 2), level


@pytest.mark.parametrize("fill", [0.0, -0.5, 1.01, float("nan")])
def test_bottom_up_build_refuses_a_fill_outside_0_1(fill: float) -> None:
    with pytest.raises(ValueError, match="bulk fill"):
        BottomUpBuilder(8, lambda node: "x", fill)


def test_rebuild_after_a_bulk_load_leaves_room_in_trees_of_order_128_and_up() -> None:
    """The commit that merges a bulk load's messages into the tree builds nodes of
    order-128 (the default) and order-256 trees 90% full (BULK_FILL), so the inserts
    that follow do not split every leaf they reach; smaller orders are still built full."""
    for order, fill in ((256, BULK_FILL), (128, BULK_FILL), (127, 1.0), (64, 1.0)):
        store = new_store(order)
        root = empty_root()
        policy = FlushPolicy(10**9, 10**9, rebuild_messages=100)
        bulk = {f"k{i:06d}": f"v{i}" for i in range(3000)}
        root, _ = commit(store, root, bulk, 1, 10**9, policy)
        root, _ = commit(store, root, {"zzz": "last"}, 2, 10**9, policy)
        assert set(root.buffer) == {"zzz"}  # the bulk load was merged below the root
        check_tree(store, root, order=order, budget=10**9, version=2)
        leaves = _levels(store, root)[-1]
        assert leaves[:-2] == [math.floor((order - 1) * fill)] * (len(leaves) - 2)
        fresh = NodeStore(store.storage, order)  # decodes every node from its file
        assert dict(scan(fresh, root)) == {**bulk, "zzz": "last"}
        assert _levels(fresh, root)[-1] == leaves
        assert TreeWriter(store, order, 10**9, 3).bulk_fill == fill


def test_the_default_root_cap_grows_for_a_root_of_many_children() -> None:
    """A root of 96 children (order 128 above ~300k tables) keeps up to 16 KiB *
    sqrt(96 / 24) = 32 KiB of messages before it flushes, which measured 1.5 KB less per
    commit at 1M tables; a root of 24 children or fewer keeps the 16 KiB cap."""
    for leaves, cap in ((96, 32768), (20, 16384)):
        store = new_store(128)
        pairs = [(f"k{i:06d}", f"v{i}") for i in range(127 * leaves + leaves - 1)]
        root = build_tree(pairs, 128, lambda node: node)
        root.system = {"created_at_millis": "0", "lakehouse_def": "ldef"}
        root, _ = commit(store, root, {}, 1, 10**6)
        assert len(root.children) == leaves
        assert TreeWriter.default_policy.root_cap(10**6, leaves) == cap
        many = {f"k{i * 13 % len(pairs):06d}": f"w{i}" for i in range(2500)}
        root, _ = commit(store, root, many, 2, 10**6)  # newest messages: not flushed yet
        assert root.buffer.nbytes > 40000
        root, _ = commit(store, root, {"zzz": "last"}, 3, 10**6)
        check_tree(store, root, order=128, budget=10**6, version=3)
        assert cap - 2000 < root.buffer.nbytes <= cap
