"""B*-style rebalancing (TreeWriter.redistribute): an overflowing node hands keys to a
neighbour with room through the parent's separator (a rotation) instead of splitting,
and a rotation flushes no buffer down to the leaves.

Every tree must still satisfy FORMAT.md section 4 (check_tree), read back as the model
says, and keep every older version readable.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_workloads import apply_changes, new_store, random_changes

from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import new_node_location
from trinityfs.tree import Node, NodeStore, TreeWriter, check_tree, lookup, scan
from trinityfs.tree.budget import FlushPolicy, message_bytes
from trinityfs.tree.bulk import build_tree


@pytest.fixture(autouse=True)
def _redistribute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TreeWriter, "redistribute", True)


def committed(store: NodeStore, node: Node) -> str:
    """Write `node` (whose children are all committed) and return its location."""
    node.system = {"created_at_millis": "1"}
    data = encode_node(node.to_file(), store.order)
    location = new_node_location(data)
    store.storage.write_immutable(location, data)
    node.location = location
    store.remember(node)
    return location


def leaf(store: NodeStore, *keys: str) -> str:
    return committed(store, Node(keys=list(keys), values=[k.upper() for k in keys], children=None))


def internal(keys: list[str], children: list[str], buffer: dict | None = None) -> Node:
    return Node(keys=keys, values=[k.upper() for k in keys], children=children, buffer=buffer or {})


def two_internal_children(store: NodeStore, a_buffer: dict | None = None) -> Node:
    """Order 5 (at most 4 keys): parent [b0] over A (2 keys, 3 leaves) and B, a new node
    with 5 keys (one too many) over 6 leaves and a buffer addressed across its range."""
    a = internal(
        ["a2", "a5"],
        [leaf(store, "a0", "a1"), leaf(store, "a3", "a4"), leaf(store, "a6", "a7")],
        a_buffer,
    )
    committed(store, a)
    b = internal(
        ["c2", "c5", "c8", "d2", "d5"],
        [
            leaf(store, "c0", "c1"),
            leaf(store, "c3", "c4"),
            leaf(store, "c6", "c7"),
            leaf(store, "d0", "d1"),
            leaf(store, "d3", "d4"),
            leaf(store, "d6", "d7"),
        ],
        {"c0": ("new-c0", 2), "c2": ("new-c2", 2), "c4": (None, 2), "d6": ("new-d6", 3)},
    )
    root = internal(["b0"], [a.location, b])  # type: ignore[list-item]
    root.system = {"created_at_millis": "4", "lakehouse_def": "ldef", "previous_root": "p"}
    return root


def expected_model() -> dict[str, str]:
    keys = ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "b0"]
    keys += ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
    keys += ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"]
    model = {k: k.upper() for k in keys}
    model.update({"c0": "new-c0", "c2": "new-c2", "d6": "new-d6"})
    del model["c4"]
    return model


def test_overflowing_internal_node_rotates_into_its_neighbour_without_a_flush() -> None:
    store = new_store(5)
    root = two_internal_children(store)
    writer = TreeWriter(store, 5, budget=10_000, version=5)
    writer._split_child(root, 1)
    # A rotation, not a split: still two children, the separator moved one key right.
    assert root.keys == ["c2"]
    a, b = root.children
    assert isinstance(a, Node) and isinstance(b, Node)
    assert a.keys == ["a2", "a5", "b0"] and b.keys == ["c5", "c8", "d2", "d5"]
    # Messages follow their key range; the one for the new separator went up.
    assert dict(a.buffer) == {"c0": ("new-c0", 2)}
    assert dict(root.buffer) == {"c2": ("new-c2", 2)}
    assert set(b.buffer) == {"c4", "d6"}
    # Nothing below A and B was copied: no leaf is rewritten by the rotation.
    assert all(isinstance(ref, str) for ref in [*a.children, *b.children])
    store.write_new_nodes(root)
    check_tree(store, root, order=5, budget=10_000, version=5)
    assert dict(scan(store, root)) == expected_model()


def test_no_rotation_when_the_neighbours_buffer_would_overfill() -> None:
    store = new_store(5)
    # A's buffer is full enough that the message for c0 (moved with B's first key)
    # no longer fits the node cap: no rotation, B is split on its own.
    filler = {"a6": ("x" * 150, 1), "a3": ("y" * 150, 1)}
    cap = sum(message_bytes(k, m) for k, m in filler.items()) + 10
    root = two_internal_children(store, a_buffer=filler)
    policy = FlushPolicy(root_buffer_bytes=10_000, node_buffer_bytes=cap)
    writer = TreeWriter(store, 5, budget=10_000, version=5, policy=policy)
    writer._split_child(root, 1)
    assert len(root.children) == 3  # B was split in two; A untouched
    assert isinstance(root.children[0], str)
    for child in root.children:
        node = store.resolve(child)
        assert node.buffer.nbytes <= cap
        assert all(isinstance(ref, str) for ref in node.children)
    store.write_new_nodes(root)
    check_tree(store, root, order=5, budget=10_000, version=5)
    model = expected_model()
    model.update({key: value for key, (value, _txn) in filler.items()})
    assert dict(scan(store, root)) == model


def test_overflowing_leaf_rotates_into_a_leaf_with_room() -> None:
    store = new_store(5)
    root = internal(["b"], [leaf(store, "a0", "a1"), leaf(store, "c0", "c1", "c2", "c3")])
    root.system = {"created_at_millis": "1", "lakehouse_def": "ldef"}
    writer = TreeWriter(store, 5, budget=10, version=2)
    new = writer.commit(root, {"c4": "C4"})  # stays in the root (latest version)
    new.system = dict(root.system, previous_root="p")
    store.write_new_nodes(new)
    writer = TreeWriter(store, 5, budget=10, version=3)
    newer = writer.commit(new, {"a9": "A9"})  # root over budget: c4 flushes to the leaf
    newer.system = dict(new.system)
    assert len(newer.children) == 2  # rotated (the old writer split: 3 leaves)
    store.write_new_nodes(newer)
    check_tree(store, newer, order=5, budget=10, version=3)
    left = store.resolve(newer.children[0])
    assert len(left.keys) == 3 and newer.keys == ["c0"]
    assert lookup(store, newer, "c4") == "C4" and lookup(store, newer, "b") == "B"


def _commit(store, root, changes, version, budget, policy) -> Node:
    new = TreeWriter(store, store.order, budget, version, policy).commit(root, changes)
    new.system = {"created_at_millis": str(version), "lakehouse_def": "ldef", "previous_root": "p"}
    store.write_new_nodes(new)
    encode_node(new.to_file(), store.order)  # the root must always be encodable
    return new


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.integers(3, 8),
    budget=st.sampled_from([40, 150, 600, 3_000]),
    root_cap=st.sampled_from([0, 100, 100_000]),
    node_cap=st.sampled_from([50, 300, 100_000]),
    bulk=st.sampled_from([0, 40, 400]),
    fill=st.sampled_from([1.0, 0.9, 0.6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_workloads_keep_every_invariant(
    order: int,
    budget: int,
    root_cap: int,
    node_cap: int,
    bulk: int,
    fill: float,
    seed: int,
) -> None:
    """Creates, deletes and re-creates over a small key domain (so keys come back),
    from an empty tree or a bulk-built one (nodes full or at a lower fill)."""
    rng = random.Random(seed)
    store = new_store(order)
    policy = FlushPolicy(root_buffer_bytes=root_cap, node_buffer_bytes=node_cap)
    model = {f"k{i:04d}": f"bulk{i}" for i in range(0, 2 * bulk, 2)}

    def emit(node: Node) -> str:
        return committed(store, node)

    root = build_tree(sorted(model.items()), order, emit, fill)
    root.system = {"created_at_millis": "0", "lakehouse_def": "ldef"}
    history = [(root, dict(model))]
    domain = max(60, 3 * bulk)
    for version in range(1, 50):
        changes = random_changes(rng, version, domain, [1, 1, 2, 5, 25], 0.35)
        root = _commit(store, root, changes, version, budget, policy)
        apply_changes(model, changes)
        check_tree(store, root, order=order, budget=budget, version=version)
        assert dict(scan(store, root)) == model
        for key in list(changes)[:3]:
            assert lookup(store, root, key) == model.get(key)
        history.append((root, dict(model)))
    for old_root, old_model in history[::7]:
        assert dict(scan(store, old_root)) == old_model


def test_rebalancing_is_on_by_default_from_order_256(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TreeWriter, "redistribute", None)  # the shipped default
    store = new_store(256)
    assert TreeWriter(store, 256, 10_000, 1).redistribute is True
    assert TreeWriter(store, 512, 10_000, 1).redistribute is True
    assert TreeWriter(store, 128, 10_000, 1).redistribute is False
    assert TreeWriter.redistribute is None  # the class default is untouched


def _rotation_count_by_resumming(writer: TreeWriter, child: Node, neighbour: Node, left: bool):
    """The definition: the largest count from the evened-out one down to the overflow
    whose moving messages (beyond the new separator) fit the neighbour's free buffer."""
    overflow = len(child.keys) - writer.max_keys
    room = writer.max_keys - len(neighbour.keys)
    if room < overflow:
        return 0
    count = min(room, max(overflow, (len(child.keys) - len(neighbour.keys)) // 2))
    if child.is_leaf:
        return count
    free = writer.node_cap - neighbour.buffer.nbytes
    for k in range(count, overflow - 1, -1):
        sep = child.keys[k - 1] if left else child.keys[-k]
        moving = [m for m in child.buffer.items() if (m[0] < sep if left else m[0] > sep)]
        if sum(message_bytes(key, msg) for key, msg in moving) <= free:
            return k
    return 0


@settings(max_examples=300, deadline=None)
@given(
    order=st.integers(3, 12),
    extra=st.integers(1, 3),
    neighbour_share=st.floats(0, 1),
    messages=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 60)), max_size=30),
    neighbour_fill=st.integers(0, 300),
    boundary=st.integers(1, 5),
    slack=st.sampled_from([-1, 0]),
    leftward=st.booleans(),
)
def test_rotation_count_is_the_largest_count_whose_messages_fit(
    order, extra, neighbour_share, messages, neighbour_fill, boundary, slack, leftward
) -> None:
    """The single pass over the child's buffer (each message handed back once as the
    count goes down) picks what re-summing the moving messages for every count picks.
    Child keys are the odd k-numbers, so messages land on separators and between them;
    the neighbour's free bytes are exactly (or one below) what rotating `boundary` keys
    would move."""
    max_keys = order - 1
    child_keys = [f"k{2 * i + 1:03d}" for i in range(max_keys + extra)]
    child = internal(child_keys, ["c"] * (len(child_keys) + 1))
    child.buffer.update({f"k{i:03d}": ("v" * size, 1) for i, size in messages})
    n_keys = round(neighbour_share * max_keys)
    neighbour = internal(
        [f"n{i}" for i in range(n_keys)], ["c"] * (n_keys + 1), {"n": ("x" * neighbour_fill, 1)}
    )
    k = min(boundary, len(child_keys))
    sep = child_keys[k - 1] if leftward else child_keys[-k]
    beyond = [(key, m) for key, m in child.buffer.items() if (key < sep if leftward else key > sep)]
    free = sum(message_bytes(key, m) for key, m in beyond) + slack
    node_cap = neighbour.buffer.nbytes + free
    policy = FlushPolicy(root_buffer_bytes=10_000, node_buffer_bytes=node_cap)
    writer = TreeWriter(new_store(order), order, 100_000, 5, policy)
    expected = _rotation_count_by_resumming(writer, child, neighbour, leftward)
    assert writer._rotation_count(child, neighbour, leftward) == expected
