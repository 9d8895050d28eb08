"""Node files written without pyarrow's IPC writer (trinityfs/format/ipcfile.py): the
same bytes as pyarrow's writer for every node, zstd or plain, when every buffer is
compressed as pyarrow does (RAW_BELOW_BYTES 0); with the default, buffers below it are
stored uncompressed (length -1) and pyarrow reads the same columns; pyarrow's writer
for everything else (lz4, other layouts, a template that fails its self-check)."""

from __future__ import annotations

import contextlib
import struct
import threading

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinityfs.format import ipcfile, node_encode
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node, encode_node_arrays
from trinityfs.format.nodefile import NodeFile

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=80)
# Without the optional zstandard module zstd node files are written by pyarrow (the
# reference itself): nothing of this module to compare.
needs_zstandard = pytest.mark.skipif(ipcfile.zstandard is None, reason="zstandard not installed")
COMPRESSIONS = [None] if ipcfile.zstandard is None else [None, "zstd"]


def _pyarrow_bytes(arrays: list[pa.Array], compression: str | None) -> bytes:
    return node_encode._pyarrow_node_file(arrays, compression)[0]


@contextlib.contextmanager
def _every_buffer_compressed():
    """pyarrow's writer compresses every buffer: so does ipcfile with RAW_BELOW_BYTES 0."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ipcfile, "RAW_BELOW_BYTES", 0)
        yield


@st.composite
def column_sets(draw) -> list[pa.Array]:
    rows = draw(st.integers(1, 300))
    columns = []
    for _ in range(4):
        null_share = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
        seeds = draw(st.lists(texts, min_size=1, max_size=8))
        rnd = draw(st.randoms(use_true_random=False))
        columns.append(
            [None if rnd.random() < null_share else rnd.choice(seeds) for _ in range(rows)]
        )
    return [pa.array(column, pa.string()) for column in columns]


@settings(max_examples=300, deadline=None)
@given(arrays=column_sets(), compression=st.sampled_from(COMPRESSIONS))
def test_the_same_bytes_as_pyarrows_writer(arrays, compression):
    assert ipcfile.template_for(compression, node_encode._pyarrow_node_file) is not None
    with _every_buffer_compressed():
        data = encode_node_arrays(arrays, compression=compression)
    assert data == _pyarrow_bytes(arrays, compression)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_node_is_encoded_without_pyarrows_ipc_writer(monkeypatch, compression):
    node = NodeFile(
        system={"created_at_millis": "5"},
        keys=["C===a", "C===b"],
        values=["0000/0000/0000/00000000-x.binpb", "0000/0000/0000/00000000-y.binpb"],
        buffer=[("C===c", "0000/0000/0000/00000000-z.binpb", 7), ("C===a", None, 8)],
    )
    expected = encode_node(node, 4, compression=compression)
    ipcfile.template_for(compression, node_encode._pyarrow_node_file)  # built beforehand

    def refuse(*args, **kwargs):
        raise AssertionError("pyarrow's IPC writer was used")

    monkeypatch.setattr(pa.ipc, "new_file", refuse)
    data = encode_node(node, 4, compression=compression)
    assert data == expected
    assert decode_node(data, 4, "n.arrow") == node


def test_lz4_and_other_layouts_use_pyarrows_writer():
    base = [pa.array(["a", None, "bc", "d"], pa.string()) for _ in range(4)]
    sliced = [pa.array(["x", "a", None, "bc", "d"], pa.string()).slice(1) for _ in range(4)]
    chunked_data = [pa.concat_arrays([a.slice(0, 2), a.slice(2)]) for a in base]
    for arrays in (base, sliced, chunked_data):
        for compression in (None, "zstd", "lz4"):
            with _every_buffer_compressed():
                data = encode_node_arrays(arrays, compression=compression)
            assert data == _pyarrow_bytes(arrays, compression)
    assert ipcfile.write_node_ipc(base, b"0" * 64, "lz4", node_encode._pyarrow_node_file) is None
    assert ipcfile.write_node_ipc(sliced, b"0" * 64, None, node_encode._pyarrow_node_file) is None


@needs_zstandard
def test_a_template_that_fails_its_self_check_is_never_used(monkeypatch):
    monkeypatch.setattr(ipcfile, "_templates", {})
    monkeypatch.setattr(ipcfile, "_ZSTD_LEVEL", 3)  # not pyarrow's level: other bytes
    monkeypatch.setattr(ipcfile, "_compressors", ipcfile._Compressors())
    assert ipcfile.template_for("zstd", node_encode._pyarrow_node_file) is None
    arrays = [pa.array(["key" * 30, None, "v" * 50], pa.string()) for _ in range(4)]
    assert encode_node_arrays(arrays, compression="zstd") == _pyarrow_bytes(arrays, "zstd")
    assert ipcfile.template_for(None, node_encode._pyarrow_node_file) is not None


@needs_zstandard
def test_threads_encode_the_same_bytes():
    nodes = [
        [pa.array([f"k{i}-{j}" * (j % 7) or None for j in range(40 + i)]) for _ in range(4)]
        for i in range(16)
    ]
    expected = [_pyarrow_bytes(arrays, "zstd") for arrays in nodes]
    results: dict[int, list[bytes]] = {}

    def work(t: int) -> None:
        results[t] = [encode_node_arrays(arrays, compression="zstd") for arrays in nodes * 5]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    with _every_buffer_compressed():
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert all(results[t] == expected * 5 for t in range(8))


def _reference(node: NodeFile, order: int, compression: str | None) -> bytes:
    """The node file by pa.array and pyarrow's writer (the encoder before segments)."""
    keys, values, pnodes, txns = node_encode.node_head_rows(node, order)
    buffer = node.buffer
    columns = [
        keys + [key for key, _, _ in buffer],
        values + [value for _, value, _ in buffer],
        pnodes + [None] * len(buffer),
        txns + [str(txn) for _, _, txn in buffer],
    ]
    return _pyarrow_bytes([pa.array(c, pa.string()) for c in columns], compression)


names = st.text(st.characters(min_codepoint=0x21, exclude_categories=("Cs",)), min_size=1)
locations = st.builds(
    lambda a, b: f"{a:04b}/0000/0000/00000000-{b}.binpb",
    st.integers(0, 15),
    st.text("abcdef0123456789-é", min_size=1, max_size=40),
)


@st.composite
def nodes(draw) -> tuple[NodeFile, int]:
    order = draw(st.integers(3, 40))
    keys = sorted(set(draw(st.lists(names, max_size=order - 1))))
    internal = draw(st.booleans())
    system = {"created_at_millis": str(draw(st.integers(0, 2**63)))}
    if draw(st.booleans()):
        system["lakehouse_def"] = draw(locations)
    if draw(st.booleans()):
        system["zz-extra"] = draw(st.text(max_size=30))
    buffer = draw(
        st.lists(
            st.tuples(names, st.one_of(st.none(), locations), st.integers(0, 2**64 - 1)),
            max_size=60,
        )
    )
    node = NodeFile(
        system=system,
        keys=keys,
        values=[draw(locations) for _ in keys],
        children=[draw(locations) for _ in range(len(keys) + 1)] if internal else None,
        buffer=buffer,
    )
    return node, order


@settings(max_examples=300, deadline=None)
@given(case=nodes(), compression=st.sampled_from(COMPRESSIONS), twice=st.booleans())
def test_nodes_from_segments_are_the_same_bytes_as_pa_array_built_ones(case, compression, twice):
    node, order = case
    try:
        expected = _reference(node, order, compression)
    except (pa.ArrowException, UnicodeError):
        return  # a lone surrogate in a system row: refused either way
    with _every_buffer_compressed():
        if twice:  # the key table's segment is then the remembered one
            encode_node(node, order, compression=compression)
        data = encode_node(node, order, compression=compression)
    assert data == expected
    assert decode_node(expected, order, "n.arrow").keys == node.keys


@needs_zstandard
def test_a_root_is_encoded_without_pa_array(monkeypatch):
    node = NodeFile(
        system={"created_at_millis": "5"},
        keys=["C===a"],
        values=["0000/0000/0000/00000000-x.binpb"],
        buffer=[("C===c", "0000/0000/0000/00000000-z.binpb", 7), ("C===a", None, 8)],
    )
    expected = _reference(node, 4, "zstd")
    ipcfile.template_for("zstd", node_encode._pyarrow_node_file)

    def refuse(*args, **kwargs):
        raise AssertionError("pa.array was used")

    monkeypatch.setattr(pa, "array", refuse)
    monkeypatch.setattr(ipcfile, "RAW_BELOW_BYTES", 0)
    assert encode_node(node, 4, compression="zstd") == expected


def test_a_bulk_loads_root_is_left_to_pyarrows_writer(monkeypatch):
    """A file of more than MAX_ROWS rows (a row per object) is written by pyarrow, which
    compresses into Arrow's memory: this module would hold its compressed buffers as
    Python bytes too (tests/test_bulk_load.py measures that memory per object)."""
    rows = ipcfile.MAX_ROWS + 1
    arrays = [pa.array([f"k{i}" for i in range(rows)], pa.string()) for _ in range(4)]
    calls = []
    real = pa.ipc.new_file

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pa.ipc, "new_file", spy)
    data = encode_node_arrays(arrays, compression="zstd")
    assert calls and data == _pyarrow_bytes(arrays, "zstd")
    calls.clear()
    fitting = [pa.array(a.to_pylist()[: ipcfile.MAX_ROWS], pa.string()) for a in arrays]
    encode_node_arrays(fitting, compression=None)
    assert not calls


@settings(max_examples=300, deadline=None)
@given(arrays=column_sets(), cut=st.floats(0, 1))
def test_joined_segments_are_the_segment_of_the_joined_rows(arrays, cut):
    columns = [a.to_pylist() for a in arrays]
    at = int(cut * len(columns[0]))
    whole = ipcfile.segment(columns)
    first = ipcfile.segment([c[:at] for c in columns])
    second = ipcfile.segment([c[at:] for c in columns])
    if whole is None:  # a lone surrogate: refused by either
        assert first is None or second is None
        return
    assert ipcfile.concat_segments(first, second) == whole


def test_a_segment_refuses_what_is_not_a_str_or_none():
    class LooksNone:
        def __eq__(self, other):
            return other is None or other is self

        __hash__ = object.__hash__

    assert ipcfile.segment([["a"], [None], [None], [None]]) is not None
    for odd in (LooksNone(), b"a", 1):
        assert ipcfile.segment([["a", odd], ["a", "b"], [None, None], [None, None]]) is None
        assert ipcfile.segment([[odd], [None], [None], [None]]) is None


def _stored_buffers(data: bytes) -> list[tuple[int, bytes]]:
    """(length prefix, stored bytes) of every non-empty buffer of a zstd node file,
    from the record batch message's Buffer table (located as ipcfile's template does)."""
    t = ipcfile.template_for("zstd", node_encode._pyarrow_node_file)
    meta_at = len(t.head)
    body_at = meta_at + len(t.meta)
    stored = []
    for i in range(12):
        offset, length = struct.unpack_from("<qq", data, meta_at + t.buffers_at + 16 * i)
        if length:
            buffer = data[body_at + offset : body_at + offset + length]
            stored.append((struct.unpack_from("<q", buffer)[0], buffer[8:]))
    return stored


@needs_zstandard
@settings(max_examples=200, deadline=None)
@given(arrays=column_sets())
def test_small_buffers_are_stored_uncompressed_and_read_back(arrays):
    data = encode_node_arrays(arrays, compression="zstd")
    with pa.ipc.open_file(pa.py_buffer(data)) as reader:
        table = reader.read_all()
    table.validate(full=True)
    assert [column.combine_chunks() for column in table.columns] == arrays
    for prefix, stored in _stored_buffers(data):
        if prefix == -1:  # stored as is
            assert 0 < len(stored) < ipcfile.RAW_BELOW_BYTES
        else:  # zstd: the uncompressed length, then a zstd frame
            assert prefix >= ipcfile.RAW_BELOW_BYTES
            assert len(ipcfile.zstandard.ZstdDecompressor().decompress(stored)) == prefix


@needs_zstandard
def test_a_roots_bitmaps_and_short_buffers_are_not_compressed(monkeypatch):
    """A root's validity bitmaps and its few versions are below RAW_BELOW_BYTES: they
    cost no compression call and are stored as they are."""
    node = NodeFile(
        system={"created_at_millis": "5"},
        keys=["C===a" + " " * 200, "C===b" + " " * 200],
        values=["0000/0000/0000/00000000-x.binpb", "0000/0000/0000/00000000-y.binpb"],
        buffer=[("C===c" + " " * 200, "0000/0000/0000/00000000-z.binpb", 7)],
    )
    ipcfile.template_for("zstd", node_encode._pyarrow_node_file)
    sizes: list[int] = []
    real = ipcfile._compressors.zstd

    class Spy:
        def compress(self, raw):
            sizes.append(len(raw))
            return real.compress(raw)

    monkeypatch.setattr(ipcfile._compressors, "zstd", Spy())
    data = encode_node(node, 8, compression="zstd")
    assert sizes and min(sizes) >= ipcfile.RAW_BELOW_BYTES
    raw = [stored for prefix, stored in _stored_buffers(data) if prefix == -1]
    assert len(raw) >= 4  # the 4 validity bitmaps (8 + 3 + 1 rows) at least
    assert decode_node(data, 8, "n.arrow") == node
