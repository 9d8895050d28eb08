"""A node file that names itself as its child (or a ring of such nodes), with no keys:
a root pointing at it made every lookup and listing through it loop forever (a hostile
or buggy writer; node files other writers wrote carry no checksum of their names).
Readers now refuse an internal node with no keys below the root (FORMAT.md 4: such a
node has at least ceil(order/2) children), and whole-tree verification reads each node
once."""

from __future__ import annotations

import os

import pytest
from waits import within

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, TrinityError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import root_node_file

X = "0000/0000/0000/00000000-node-11111111-2222-4333-8444-555555555555.arrow"
Y = "0000/0000/0000/00000001-node-11111111-2222-4333-8444-666666666666.arrow"


def _plant(root: str, location: str, child: str, buffer=()) -> None:
    node = NodeFile(
        system={"created_at_millis": "1"}, keys=[], values=[], children=[child], buffer=list(buffer)
    )
    os.makedirs(os.path.join(root, os.path.dirname(location)), exist_ok=True)
    with open(os.path.join(root, location), "wb") as f:
        f.write(encode_node(node, 4))


def _lake(tmp_path, plant) -> str:
    """30 tables in an order-4 tree whose latest root's first child is replaced by X."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(
        root, storage_options={"fsync": False}, order=4, node_file_max_size_bytes=4096
    )
    lake.create_namespace("ns")
    for i in range(30):
        lake.create_table("ns", f"t{i:03d}")
    plant(root)
    path = os.path.join(root, root_node_file(lake.latest_version()))
    with open(path, "rb") as f:
        node = decode_node(f.read(), None, os.path.basename(path))
    assert node.children
    node.children[0] = X
    with open(path, "wb") as f:
        f.write(encode_node(node, 4))
    return root


def _self_loop(root):
    _plant(root, X, X)


def _ring(root):
    _plant(root, X, Y)
    _plant(root, Y, X)


def _self_loop_with_a_message(root):
    _plant(root, X, X, [("C===ns" + " " * 98 + "t000" + " " * 96, "a.binpb", 1)])


PLANTS = [_self_loop, _ring, _self_loop_with_a_message]


@pytest.mark.parametrize("plant", PLANTS)
def test_a_lookup_through_a_node_naming_itself_is_corrupt(tmp_path, plant):
    root = _lake(tmp_path, plant)
    with pytest.raises(CorruptFileError, match="internal node with no keys"):
        within(10, lambda: Lakehouse.open(root).describe_table("ns", "t000"))


@pytest.mark.parametrize("plant", PLANTS)
def test_a_listing_through_a_node_naming_itself_is_corrupt(tmp_path, plant):
    root = _lake(tmp_path, plant)
    with pytest.raises(CorruptFileError, match="internal node with no keys"):
        within(10, lambda: Lakehouse.open(root).list_tables("ns"))


@pytest.mark.parametrize("plant", PLANTS)
def test_whole_tree_verification_returns(tmp_path, plant):
    root = _lake(tmp_path, plant)
    lake = Lakehouse.open(root, verify="tree")
    with pytest.raises(TrinityError):
        within(20, lambda: lake.create_namespace("other"))


@pytest.mark.parametrize("plant", PLANTS)
def test_fsck_returns_and_reports_it(tmp_path, plant):
    root = _lake(tmp_path, plant)
    report = within(20, lambda: Lakehouse.open(root).fsck())
    assert not report.ok
