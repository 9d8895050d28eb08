from __future__ import annotations

import random
import time

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinityfs.errors import CorruptFileError, InvalidArgumentError, UnsafeLocationError
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import SCHEMA, NodeFile

PATH = "0000/1111/0000/11110000-node-test.arrow"


def root_node() -> NodeFile:
    return NodeFile(
        system={
            "lakehouse_def": "_lakehouse_def_a.binpb",
            "previous_root": "_0" + "0" * 63 + ".arrow",
            "rollback_from_root": "_1" + "0" * 63 + ".arrow",
            "created_at_millis": "1700000000000",
        },
        keys=["B===a   ", "B===m   "],
        values=["d/a.binpb", "d/m.binpb"],
        children=["n/0.arrow", "n/1.arrow", "n/2.arrow"],
        buffer=[("B===c   ", "d/c.binpb", 7), ("B===a   ", None, 8), ("B===c   ", "d/c2.binpb", 8)],
    )


def leaf_node() -> NodeFile:
    return NodeFile(
        system={"created_at_millis": "5"},
        keys=["C===ns  t1  ", "C===ns  t2  ", "C===ns  t3  "],
        values=["a.binpb", "b.binpb", "c.binpb"],
    )


def read_rows(data: bytes) -> list[tuple]:
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    return [tuple(row.values()) for row in table.to_pylist()]


def raw_file(rows: list[tuple], schema: pa.Schema = SCHEMA, batches: int = 1) -> bytes:
    """Write arbitrary rows, bypassing the encoder's checks."""
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    table = pa.table(
        [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)], schema=schema
    )
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema) as writer:
        size = max(1, -(-len(rows) // batches))
        for batch in table.to_batches(max_chunksize=size):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


N = None
LEAF_ROWS = [
    ("created_at_millis", "5", N, N),
    ("n_keys", "1", N, N),
    (N, N, N, N),
    ("B===a", "x/a", N, N),
    (N, N, N, N),
]


# ----------------------------------------------------------------- round trips and layout


def empty_node() -> NodeFile:
    return NodeFile(system={"created_at_millis": "0"})


@pytest.mark.parametrize("make", [root_node, leaf_node, empty_node])
def test_round_trip(make):
    node = make()
    for order in (4, 5, 128):
        data = encode_node(node, order)
        assert decode_node(data, order, PATH) == node
        assert decode_node(data, None, PATH) == node


def test_internal_node_round_trip_with_empty_buffer():
    node = root_node()
    node.buffer = []
    node.system = {"created_at_millis": "1"}
    assert decode_node(encode_node(node, 3), None, PATH) == node


def test_root_layout_is_exactly_format_section_4():
    data = encode_node(root_node(), 4)
    reader = pa.ipc.open_file(pa.py_buffer(data))
    assert reader.num_record_batches == 1
    assert reader.schema.names == ["key", "value", "pnode", "txn"]
    assert all(f.type == pa.string() and f.nullable for f in reader.schema)
    assert read_rows(data) == [
        ("lakehouse_def", "_lakehouse_def_a.binpb", N, N),
        ("previous_root", "_0" + "0" * 63 + ".arrow", N, N),
        ("rollback_from_root", "_1" + "0" * 63 + ".arrow", N, N),
        ("created_at_millis", "1700000000000", N, N),
        ("n_keys", "2", N, N),
        (N, N, "n/0.arrow", N),
        ("B===a   ", "d/a.binpb", "n/1.arrow", N),
        ("B===m   ", "d/m.binpb", "n/2.arrow", N),
        (N, N, N, N),
        ("B===c   ", "d/c.binpb", N, "7"),
        ("B===a   ", N, N, "8"),
        ("B===c   ", "d/c2.binpb", N, "8"),
    ]


def test_leaf_layout_pads_the_key_table_to_the_order():
    rows = read_rows(encode_node(leaf_node(), 6))
    assert rows[:2] == [("created_at_millis", "5", N, N), ("n_keys", "3", N, N)]
    assert rows[2] == (N, N, N, N)
    assert rows[3:6] == [
        (k, v, N, N) for k, v in zip(leaf_node().keys, leaf_node().values, strict=True)
    ]
    assert rows[6:] == [(N, N, N, N)] * 2
    assert len(rows) == 2 + 6


def test_other_system_keys_follow_the_known_ones_sorted():
    node = leaf_node()
    node.system = {"zz": "1", "created_at_millis": "5", "aa": "2"}
    rows = read_rows(encode_node(node, 4))
    assert [r[0] for r in rows[:5]] == ["created_at_millis", "n_keys", "aa", "zz", N]
    assert decode_node(encode_node(node, 4), 4, PATH).system == node.system


def test_encoding_is_deterministic():
    assert encode_node(root_node(), 8) == encode_node(root_node(), 8)


def test_n_keys_is_derived():
    node = leaf_node()
    node.system["n_keys"] = "3"
    assert "n_keys" not in decode_node(encode_node(node, 4), 4, PATH).system
    node.system["n_keys"] = "2"
    with pytest.raises(InvalidArgumentError, match="n_keys"):
        encode_node(node, 4)


def test_multiple_batches_are_accepted():
    rows = read_rows(encode_node(root_node(), 4))
    assert decode_node(raw_file(rows, batches=4), 4, PATH) == root_node()


# ----------------------------------------------------------------- encoder input checks


def _with(**changes) -> NodeFile:
    node = root_node()
    for name, value in changes.items():
        setattr(node, name, value)
    return node


@pytest.mark.parametrize(
    ("node", "order", "fragment"),
    [
        (root_node(), 2, "order"),
        (root_node(), True, "order"),
        (_with(keys=["a", "b", "c"], values=["x", "y", "z"], children=None), 3, "exceed"),
        (_with(values=["x"]), 4, "values"),
        (_with(children=["a", "b"]), 4, "children"),
        (_with(children=[]), 4, "children"),
        (_with(keys=["b", "a"]), 4, "ascending"),
        (_with(keys=["a", "a"]), 4, "ascending"),
        (_with(keys=["a", 1]), 4, "str"),
        (_with(values=["x", "../y"]), 4, "'..'"),
        (_with(children=["a", "/b", "c"]), 4, "absolute"),
        (_with(system={"n_keys": "2"}), 4, "created_at_millis"),
        (_with(system={"created_at_millis": "-1"}), 4, "created_at_millis"),
        (_with(system={"created_at_millis": 5}), 4, "str"),
        (_with(system={"created_at_millis": "1", "lakehouse_def": "s3://x"}), 4, "scheme"),
        (_with(buffer=[("a", "x", -1)]), 4, "txn"),
        (_with(buffer=[("a", "x", 2**64)]), 4, "txn"),
        (_with(buffer=[("a", "x", 1.0)]), 4, "int"),
        (_with(buffer=[("a", "x", True)]), 4, "txn"),
        (_with(buffer=[("a", "x", "1")]), 4, "txn"),
        (_with(buffer=[("a", "x")]), 4, "buffer"),
        (_with(buffer=[None]), 4, "buffer"),
        (_with(buffer=[(None, "x", 1)]), 4, "no key"),
        (_with(buffer=[("a", 1, 1)]), 4, "buffer"),
        (_with(buffer=[("a", "x", 1), ("b", "a//b", 2)]), 4, "message 1"),
        (_with(buffer=(("a", "x", 1),)), 4, "list"),
    ],
)
def test_encoder_rejects_inconsistent_nodes(node, order, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        encode_node(node, order)
    assert fragment in str(info.value)


# ----------------------------------------------------------------- decoder verification


def test_decode_hand_written_leaf():
    node = decode_node(raw_file(LEAF_ROWS), 3, PATH)
    assert node == NodeFile(system={"created_at_millis": "5"}, keys=["B===a"], values=["x/a"])


def _corrupt(rows, order=3, error=CorruptFileError) -> str:
    with pytest.raises(error) as info:
        decode_node(raw_file(rows), order, PATH)
    assert info.value.path == PATH
    assert PATH in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    ("rows", "order", "fragment"),
    [
        ([], 3, "no key table"),
        (LEAF_ROWS[:2], 3, "no key table"),
        (LEAF_ROWS[:4], 3, "file ends"),
        (LEAF_ROWS, 4, "file ends"),
        (LEAF_ROWS[:1] + LEAF_ROWS[2:], 3, "n_keys is missing"),
        (LEAF_ROWS[1:], 3, "created_at_millis is missing"),
        ([("created_at_millis", "x", N, N), *LEAF_ROWS[1:]], 3, "not a non-negative decimal"),
        ([("n_keys", "2", N, N), *LEAF_ROWS], 3, "appears twice"),
        ([("x", N, N, N), *LEAF_ROWS], 3, "system row"),
        ([("x", "y", "p", N), *LEAF_ROWS], 3, "system row"),
        ([("x", "y", N, "1"), *LEAF_ROWS], 3, "system row"),
        ([(N, "y", N, N), *LEAF_ROWS], 3, "system row"),
        ([*LEAF_ROWS[:1], ("n_keys", "2", N, N), *LEAF_ROWS[2:]], 3, "n_keys is 2"),
        ([*LEAF_ROWS[:3], ("B===a", N, N, N), LEAF_ROWS[4]], 3, "has no value"),
        ([*LEAF_ROWS[:3], ("B===a", "x/a", "c", N), LEAF_ROWS[4]], 3, "leaf node key"),
        ([*LEAF_ROWS[:4], ("B===b", "x", N, N)], 3, "n_keys is 1"),
        ([*LEAF_ROWS[:4], (N, "x", N, N)], 3, "not all null"),
        ([*LEAF_ROWS[:4], (N, N, "p", N)], 3, "not all null"),
        ([*LEAF_ROWS[:4], (N, N, N, "1")], 3, "has a txn"),
        ([*LEAF_ROWS[:2], (N, N, N, "1"), *LEAF_ROWS[3:]], 3, "has a txn"),
        (
            [
                ("created_at_millis", "5", N, N),
                ("n_keys", "2", N, N),
                (N, N, N, N),
                ("B===b", "x", N, N),
                ("B===a", "y", N, N),
            ],
            3,
            "ascending",
        ),
        (
            [
                ("created_at_millis", "5", N, N),
                ("n_keys", "1", N, N),
                (N, N, "c0", N),
                ("B===a", "x", N, N),
                (N, N, N, N),
            ],
            3,
            "no child pointer",
        ),
        ([*LEAF_ROWS, (N, "v", N, "1")], 3, "no key"),
        ([*LEAF_ROWS, ("k", "v", "p", "1")], 3, "pnode"),
        ([*LEAF_ROWS, ("k", "v", N, N)], 3, "no txn"),
        ([*LEAF_ROWS, ("k", "v", N, "-1")], 3, "decimal"),
        ([*LEAF_ROWS, ("k", "v", N, "1.0")], 3, "decimal"),
        ([*LEAF_ROWS, ("k", "v", N, " 1")], 3, "decimal"),
        ([*LEAF_ROWS, ("k", "v", N, "1\n")], 3, "decimal"),
        ([*LEAF_ROWS, ("k", "v", N, str(2**64))], 3, "64 bits"),
    ],
)
def test_decoder_rejects(rows, order, fragment):
    assert fragment in _corrupt(rows, order)


@pytest.mark.parametrize(
    "rows",
    [
        [("lakehouse_def", "../x", N, N), *LEAF_ROWS],
        [("previous_root", "/abs", N, N), *LEAF_ROWS],
        [("rollback_from_root", "s3://b/k", N, N), *LEAF_ROWS],
        [*LEAF_ROWS[:3], ("B===a", "a/../../x", N, N), LEAF_ROWS[4]],
        [*LEAF_ROWS[:2], (N, N, "file:///etc", N), ("B===a", "x", "y", N), LEAF_ROWS[4]],
        [*LEAF_ROWS[:2], (N, N, "a", N), ("B===a", "x", "y\\z", N), LEAF_ROWS[4]],
        [*LEAF_ROWS, ("k", "~/x", N, "1")],
        [*LEAF_ROWS, ("k", "v", N, "1"), ("k", "", N, "2")],
    ],
)
def test_decoder_rejects_unsafe_locations(rows):
    assert "unsafe location" in _corrupt(rows, 3, UnsafeLocationError)


def test_decode_with_wrong_order():
    data = encode_node(leaf_node(), 5)
    with pytest.raises(CorruptFileError):
        decode_node(data, 6, PATH)
    node = root_node()
    data = encode_node(node, 5)
    with pytest.raises(CorruptFileError):  # the key table would swallow a buffer row
        decode_node(data, 6, PATH)
    with pytest.raises(CorruptFileError):  # a padding row would be read as a buffer row
        decode_node(data, 4, PATH)
    with pytest.raises(InvalidArgumentError):
        decode_node(data, 1, PATH)


def test_inferred_order_must_be_a_real_tree():
    rows = [("created_at_millis", "5", N, N), ("n_keys", "0", N, N), (N, N, N, N)]
    assert "order" in _corrupt([*rows, (N, N, N, N)], None)
    assert decode_node(raw_file(rows * 1 + [(N, N, N, N)] * 2), None, PATH).keys == []


@pytest.mark.parametrize(
    "schema",
    [
        pa.schema([(n, pa.string()) for n in ["key", "value", "txn", "pnode"]]),
        pa.schema([(n, pa.string()) for n in ["key", "value", "pnode"]]),
        pa.schema([(n, pa.string()) for n in ["key", "value", "pnode", "txn", "extra"]]),
        pa.schema([(n, pa.string()) for n in ["Key", "value", "pnode", "txn"]]),
        pa.schema(
            [
                ("key", pa.string()),
                ("value", pa.string()),
                ("pnode", pa.string()),
                ("txn", pa.int64()),
            ]
        ),
        pa.schema(
            [
                ("key", pa.large_string()),
                ("value", pa.string()),
                ("pnode", pa.string()),
                ("txn", pa.string()),
            ]
        ),
        pa.schema(
            [
                ("key", pa.binary()),
                ("value", pa.string()),
                ("pnode", pa.string()),
                ("txn", pa.string()),
            ]
        ),
    ],
)
def test_wrong_schema(schema):
    columns = [pa.nulls(3, type=f.type) for f in schema]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema) as writer:
        writer.write_batch(pa.record_batch(columns, schema=schema))
    with pytest.raises(CorruptFileError, match="column") as info:
        decode_node(sink.getvalue().to_pybytes(), None, PATH)
    assert info.value.path == PATH


def test_stream_format_is_not_a_node_file():
    table = pa.ipc.open_file(pa.py_buffer(encode_node(root_node(), 4))).read_all()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, SCHEMA) as writer:
        writer.write_table(table)
    with pytest.raises(CorruptFileError, match="Arrow IPC"):
        decode_node(sink.getvalue().to_pybytes(), 4, PATH)


def test_truncated_files():
    data = encode_node(root_node(), 4)
    for size in list(range(0, 64)) + list(range(64, len(data), 7)):
        with pytest.raises(CorruptFileError) as info:
            decode_node(data[:size], 4, PATH)
        assert info.value.path == PATH


def test_random_bytes():
    rng = random.Random(1234)
    for size in [0, 1, 8, 100, 1000, 10000]:
        with pytest.raises(CorruptFileError):
            decode_node(rng.randbytes(size), None, PATH)
    with pytest.raises(CorruptFileError):
        decode_node(b"ARROW1\x00\x00" + rng.randbytes(200) + b"ARROW1", None, PATH)


def test_bit_flips_never_escape_as_other_errors():
    data = bytearray(encode_node(root_node(), 4))
    rng = random.Random(99)
    for _ in range(400):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
        try:
            decode_node(bytes(mutated), rng.choice([4, None]), PATH)
        except CorruptFileError as exc:
            assert exc.path == PATH


def test_large_buffer_decodes_quickly():
    n = 200_000
    loc = "1010/1010/1010/10101010-table-ns-t-6fcb514b-b878-4c9d-95b7-8dc3a7ce6fd8.binpb"
    node = NodeFile(
        system={"created_at_millis": "1"},
        buffer=[(f"C===ns  t{i:08d}", loc if i % 3 else None, i) for i in range(n)],
    )
    data = encode_node(node, 128)
    started = time.perf_counter()
    decoded = decode_node(data, 128, PATH)
    elapsed = time.perf_counter() - started
    assert decoded == node
    assert elapsed < 2.0, f"decoding {n} buffer rows took {elapsed:.2f}s"


# ----------------------------------------------------------------- property based

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), min_codepoint=0x21).filter(
        lambda c: c not in "\x7f/\\:*?[]#%~."
    ),
    min_size=1,
    max_size=8,
)
_loc = st.builds(lambda a, b: f"{a}/{b}", _text, _text)


@st.composite
def nodes(draw):
    order = draw(st.integers(min_value=3, max_value=12))
    keys = sorted(set(draw(st.lists(_text, max_size=order - 1))))
    internal = draw(st.booleans())
    system = {"created_at_millis": str(draw(st.integers(0, 2**63)))}
    if draw(st.booleans()):
        system["lakehouse_def"] = draw(_loc)
        system["previous_root"] = draw(_loc)
    system.update(draw(st.dictionaries(st.sampled_from(["x", "y.z"]), _text, max_size=2)))
    node = NodeFile(
        system=system,
        keys=keys,
        values=[draw(_loc) for _ in keys],
        children=[draw(_loc) for _ in range(len(keys) + 1)] if internal else None,
        buffer=draw(
            st.lists(st.tuples(_text, st.none() | _loc, st.integers(0, 2**64 - 1)), max_size=10)
        ),
    )
    return node, order


@settings(max_examples=150, deadline=None)
@given(nodes())
def test_round_trip_property(case):
    node, order = case
    data = encode_node(node, order)
    assert decode_node(data, order, PATH) == node
    assert decode_node(data, None, PATH) == node
