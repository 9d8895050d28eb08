"""What a commit writes: new lakehouses get the measured node size and compressed node
files; existing lakehouses keep what their LakehouseDef says."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import PROP_NODE_FILE_COMPRESSION
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import root_node_file
from trinityfs.tree.budget import new_lakehouse_options


def _body_compressed(data: bytes, order: int = 128) -> bool:
    """Whether a node file is smaller than the plain encoding of the same node."""
    return len(data) < len(encode_node(decode_node(data, order, "x"), order))


def test_new_lakehouse_gets_measured_node_size_and_zstd(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path / "l"))
    ldef = lake.lakehouse_def()
    assert ldef.node_file_max_size_bytes == 128 * 1024
    assert ldef.properties[PROP_NODE_FILE_COMPRESSION] == "zstd"
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"t{i}")
    data = lake.storage.read(root_node_file(lake.latest_version()))
    assert _body_compressed(data)
    assert len(lake.list_tables("ns")) == 40
    lake.check()


def test_explicit_choices_win_and_plain_lakehouses_stay_plain(tmp_path) -> None:
    lake = Lakehouse.create(
        str(tmp_path / "l"),
        node_file_max_size_bytes=1048576,
        properties={PROP_NODE_FILE_COMPRESSION: "none", "owner": "me"},
    )
    ldef = lake.lakehouse_def()
    assert ldef.node_file_max_size_bytes == 1048576 and ldef.properties["owner"] == "me"
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    data = lake.storage.read(root_node_file(lake.latest_version()))
    assert not _body_compressed(data)


def test_large_order_gets_room_for_a_buffer() -> None:
    opts = new_lakehouse_options({"order": 1024})
    assert opts["node_file_max_size_bytes"] == 1024 * 404 + 64 * 1024
    assert new_lakehouse_options({"order": "x"}) == {
        "order": "x",
        "properties": {PROP_NODE_FILE_COMPRESSION: "zstd"},
    }


def test_unknown_compression_is_refused(tmp_path) -> None:
    with pytest.raises(InvalidArgumentError, match=r"node-file\.compression"):
        Lakehouse.create(str(tmp_path / "l"), properties={PROP_NODE_FILE_COMPRESSION: "gzip"})
    assert not (tmp_path / "l").exists() or not any((tmp_path / "l").iterdir())
    with pytest.raises(InvalidArgumentError, match="unknown node compression"):
        encode_node(decode_node(encode_node(_leaf(), 4), 4, "x"), 4, compression="gzip")


def _leaf():
    from trinityfs.format.nodefile import NodeFile

    return NodeFile(system={"created_at_millis": "1"}, keys=["a"], values=["v.binpb"])


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_compressed_node_files_decode_to_the_same_node(compression) -> None:
    from trinityfs.format.nodefile import NodeFile

    nf = NodeFile(
        system={"created_at_millis": "1"},
        keys=[f"C===ns{i:04d}".ljust(204) for i in range(10)],
        values=[f"loc/{i}.binpb" for i in range(10)],
        buffer=[(f"C===ns{i:04d}x".ljust(204), f"loc/b{i}.binpb", i) for i in range(20)],
    )
    plain = encode_node(nf, 16)
    packed = encode_node(nf, 16, compression=compression)
    assert len(packed) < len(plain) / 2
    assert decode_node(packed, 16, "x") == decode_node(plain, 16, "x")
