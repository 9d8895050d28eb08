"""Node files: small nodes are encoded and decoded without per-call pyarrow kernels
(each costs 10-100 us, a regex kernel compiles its pattern on every call), large ones
with one kernel per column; both paths keep every check (issue 13: every commit
re-encodes the root, a cold listing decodes hundreds of node files)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.test_format_nodefile import LEAF_ROWS, PATH, raw_file, root_node
from trinityfs.errors import CorruptFileError, InvalidArgumentError, UnsafeLocationError
from trinityfs.format import node_decode, nodefile
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import NodeFile

N = None
KERNELS = ("match_substring_regex", "fill_null", "index", "cast", "invert", "and_")


@pytest.fixture(params=["python", "vector"])
def path_kind(request, monkeypatch):
    """Force every column check through the Python loop or through the kernels."""
    monkeypatch.setattr(nodefile, "_VECTOR_MIN", 10**9 if request.param == "python" else 0)
    return request.param


def count_kernels(monkeypatch) -> dict[str, int]:
    calls = dict.fromkeys(KERNELS, 0)
    for name in KERNELS:
        real = getattr(pc, name)

        def counting(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(pc, name, counting)
    return calls


def big_root(messages: int) -> NodeFile:
    node = root_node()
    node.system.update({f"x{i:03d}": str(i) for i in range(70)})  # > 64 system rows
    node.buffer = [(f"B===k{i:05d}", f"d/{i}.binpb" if i % 4 else None, i) for i in range(messages)]
    return node


def test_a_small_root_is_encoded_and_decoded_without_regex_kernels(monkeypatch):
    node = root_node()
    node.buffer = [(f"B===k{i:03d}", f"d/{i}.binpb", 9) for i in range(40)]
    calls = count_kernels(monkeypatch)
    data = encode_node(node, 8, compression="zstd")
    assert decode_node(data, None, PATH) == node
    assert calls["match_substring_regex"] == 0, calls
    # only the rows checksum's null fill, once when writing and once when reading
    assert calls["fill_null"] + calls["index"] + calls["cast"] + calls["invert"] <= 2, calls


def test_a_large_buffer_is_checked_by_one_regex_kernel_per_column(monkeypatch):
    node = big_root(600)
    calls = count_kernels(monkeypatch)
    data = encode_node(node, 8)
    assert calls["match_substring_regex"] == 1  # the buffer values
    assert decode_node(data, 8, PATH) == node
    assert calls["match_substring_regex"] == 3  # + the txn texts and the values on reading


@pytest.mark.parametrize("messages", [0, 3, 300])
def test_both_paths_write_the_same_bytes_and_read_them_back(path_kind, messages):
    node = big_root(messages)
    data = encode_node(node, 8)
    assert decode_node(data, 8, PATH) == node
    assert decode_node(data, None, PATH) == node
    assert data == nodefile_bytes_of_the_other_path(node, path_kind)


def nodefile_bytes_of_the_other_path(node: NodeFile, path_kind: str) -> bytes:
    saved = nodefile._VECTOR_MIN
    nodefile._VECTOR_MIN = 0 if path_kind == "python" else 10**9
    try:
        return encode_node(node, 8)
    finally:
        nodefile._VECTOR_MIN = saved


def _leaf_with_buffer(*messages):
    return [*LEAF_ROWS, *messages]


@pytest.mark.parametrize(
    ("rows", "error", "fragment"),
    [
        (
            [*LEAF_ROWS[:3], ("B===a", "a/../../x", N, N), LEAF_ROWS[4]],
            UnsafeLocationError,
            "row 3",
        ),
        (
            [*LEAF_ROWS[:2], (N, N, "a", N), ("B===a", "x", "y\\z", N), LEAF_ROWS[4]],
            UnsafeLocationError,
            "row 3 (child pointer)",
        ),
        (_leaf_with_buffer(("k", "v", N, "1"), ("k", "~/x", N, "2")), UnsafeLocationError, "row 6"),
        (_leaf_with_buffer(("k", "v", N, "1"), ("k", "v", N, "1a")), CorruptFileError, "row 6"),
        (_leaf_with_buffer(("k", "v", N, "٣")), CorruptFileError, "decimal"),  # Arabic 3
        (_leaf_with_buffer(("k", "v", N, "")), CorruptFileError, "decimal"),
        (_leaf_with_buffer(("k", "v", N, str(2**64))), CorruptFileError, "64 bits"),
        (
            [*((f"x{i:03d}", "1", N, N) for i in range(70)), *LEAF_ROWS[1:]],
            CorruptFileError,
            "created_at_millis is missing",
        ),
        ([(f"x{i:03d}", "1", N, N) for i in range(70)], CorruptFileError, "no key table"),
    ],
)
def test_both_paths_reject_the_same_files(path_kind, rows, error, fragment):
    with pytest.raises(error) as info:
        decode_node(raw_file(rows), 3, PATH)
    assert fragment in str(info.value)
    assert info.value.path == PATH


def test_many_system_rows_before_the_key_table_decode(path_kind):
    rows = [*((f"x{i:03d}", "1", N, N) for i in range(70)), *LEAF_ROWS]
    node = decode_node(raw_file(rows), 3, PATH)
    assert node.keys == ["B===a"] and len(node.system) == 71


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        (("k", "a//b", 1), "buffer message 2"),
        (("k", "v", 1.0), "txn must be an int"),
        (("k", "v", True), "buffer entries"),
        (("k", "v", -1), "buffer entries"),
        (("k", "v", 2**64), "buffer entries"),
        (None, "buffer message 2 is None"),
        ((None, "v", 1), "buffer message 2 has no key"),
        (("k", "\ud800", 1), "buffer entries"),
    ],
)
def test_both_paths_refuse_to_encode_the_same_buffers(path_kind, message, fragment):
    node = root_node()
    node.buffer = [("a", "v", 1), ("b", None, 1), message]
    with pytest.raises(InvalidArgumentError) as info:
        encode_node(node, 8)
    assert fragment in str(info.value)


def test_node_files_are_read_without_arrow_threads():
    """Handing a small file's dozen buffers to Arrow's thread pool costs more than the
    work; parallelism comes from decoding several files at once."""
    assert node_decode._READ_OPTIONS.use_threads is False
    table = pa.ipc.open_file(
        pa.py_buffer(encode_node(root_node(), 8, compression="zstd")),
        options=node_decode._READ_OPTIONS,
    ).read_all()
    assert table.num_rows > 0
