"""A root with a valid checksum (a buggy or hostile writer) whose children name one node
twice: `list_tables` returned 36 tables twice and missed 47, out of order, and
`describe_table` of a table the tree holds said "no such table", with no error (fsck
alone noticed). Readers now check each child against the separators around it and
raise CorruptFileError naming the node (found by helper integrity3)."""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, ObjectNotFoundError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import root_node_file

TABLES = [f"t{i:03d}" for i in range(120)]


def _lake_with_root(tmp_path, change) -> Lakehouse:
    """120 tables in an order-4 tree; the latest root re-encoded after `change`."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, order=4, node_file_max_size_bytes=4096)
    lake.create_namespace("ns")
    for name in TABLES:
        lake.create_table("ns", name)
    path = os.path.join(root, root_node_file(lake.latest_version()))
    with open(path, "rb") as f:
        node = decode_node(f.read(), None, os.path.basename(path))
    assert node.children is not None and len(node.children) >= 3
    change(node)
    with open(path, "wb") as f:
        f.write(encode_node(node, 4))
    return Lakehouse.open(root)


def _second_child_is_the_first(node) -> None:
    node.children[1] = node.children[0]


def _first_two_children_swapped(node) -> None:
    node.children[0], node.children[1] = node.children[1], node.children[0]


@pytest.mark.parametrize("change", [_second_child_is_the_first, _first_two_children_swapped])
def test_a_listing_refuses_a_misplaced_node(tmp_path, change):
    lake = _lake_with_root(tmp_path, change)
    with pytest.raises(CorruptFileError, match="outside the range"):
        lake.list_tables("ns")
    with pytest.raises(CorruptFileError, match="outside the range"):
        list(lake.at(lake.latest_version()).list_tables("ns"))


@pytest.mark.parametrize("change", [_second_child_is_the_first, _first_two_children_swapped])
def test_a_lookup_through_a_misplaced_node_is_corrupt_not_absent(tmp_path, change):
    lake = _lake_with_root(tmp_path, change)
    failures = 0
    for name in TABLES:
        try:
            lake.describe_table("ns", name)
        except CorruptFileError as exc:
            assert "node referenced twice" in str(exc)
            failures += 1
        except ObjectNotFoundError:
            pytest.fail(f"{name} is in the tree but was reported absent")
    assert failures > 0


def test_an_untouched_tree_reads_whole(tmp_path):
    lake = _lake_with_root(tmp_path, lambda node: None)
    assert [name for name in lake.list_tables("ns")] == TABLES
    for name in TABLES[::7]:
        lake.describe_table("ns", name)


def test_a_commit_does_not_carry_a_misplaced_node_forward():
    """The writer checks a committed child before it copies it for a flush: a commit on
    such a root is refused instead of writing the lie into the next version."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from tree_workloads import empty_root, new_store

    from trinityfs.tree import TreeWriter

    store = new_store(4)

    def commit(root, changes, version):
        new = TreeWriter(store, 4, 60, version).commit(root, changes)
        new.system = {"created_at_millis": str(version), "lakehouse_def": "l", "previous_root": "p"}
        store.write_new_nodes(new)
        return new

    root = empty_root()
    for version in range(1, 60):
        root = commit(root, {f"k{version * 7 % 500:03d}": "x"}, version)
    assert root.children is not None and len(root.children) >= 2
    lying = root.copy()
    lying.children[1] = lying.children[0]
    lo, hi = lying.keys[0], lying.keys[1] if len(lying.keys) > 1 else "k~"
    inside = [f"k{i:03d}" for i in range(500) if lo < f"k{i:03d}" < hi][:6]
    assert inside
    with pytest.raises(CorruptFileError, match="outside the range"):
        after = commit(lying, dict.fromkeys(inside, "y"), 60)
        commit(after, {"a": "z"}, 61)  # flushes the keys above into child 1
