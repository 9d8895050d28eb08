"""The rows checksum of small node files is computed from the column buffers with
integer arithmetic instead of compute kernels (a commit encodes a root every time):
it must equal the checksum's definition (format/integrity.py) for every array shape,
or files written before would stop verifying."""

from __future__ import annotations

import hashlib
import random

import pyarrow as pa
import pytest

from trinityfs.format import integrity
from trinityfs.format.integrity import rows_digest


def reference(columns: list[pa.Array]) -> str:
    """The definition, row by row: per column the lengths (int32 LE, -1 for null),
    then the bytes between the first and last offsets."""
    h = hashlib.sha256(integrity._ROWS_DIGEST_DOMAIN)
    n = len(columns[0])
    h.update(n.to_bytes(8, "little"))
    for column in columns:
        for value in column.to_pylist():
            length = -1 if value is None else len(value.encode("utf-8"))
            h.update(length.to_bytes(4, "little", signed=True))
        offsets, data = column.buffers()[1], column.buffers()[2]
        if n and data is not None:
            first = int.from_bytes(offsets[4 * column.offset : 4 * column.offset + 4], "little")
            end = 4 * (column.offset + n)
            last = int.from_bytes(offsets[end : end + 4], "little")
            h.update(memoryview(data)[first:last])
    return h.hexdigest()


def random_column(rnd: random.Random, n: int) -> pa.Array:
    share = rnd.choice([0.0, 0.1, 0.5, 0.9, 1.0])
    pad = rnd.randrange(0, 20)
    values = [
        None if rnd.random() < share else "k" * rnd.randrange(0, 12) + rnd.choice(["", "é", "∑"])
        for _ in range(n + pad)
    ]
    column = pa.array(values, type=pa.string())
    return column.slice(rnd.randrange(0, pad + 1), n)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 63, 64, 65, 130, 1000, 4096, 4097, 6000])
def test_lengths_from_buffers_match_the_definition(n: int) -> None:
    rnd = random.Random(n)
    for _ in range(20):
        columns = [random_column(rnd, n) for _ in range(4)]
        assert rows_digest(columns) == reference(columns)


def test_a_null_with_bytes_behind_it_still_counts_minus_one() -> None:
    # Arrow lets a null slot span bytes; the checksum gives it -1 whatever its offsets say
    offsets = pa.py_buffer((0).to_bytes(4, "little") + (3).to_bytes(4, "little") * 2)
    validity = pa.py_buffer(bytes([0b10]))
    column = pa.Array.from_buffers(pa.string(), 2, [validity, offsets, pa.py_buffer(b"abc")])
    other = pa.array(["x", "y"], type=pa.string())
    columns = [column, other, other, other]
    assert column.to_pylist() == [None, ""]
    assert rows_digest(columns) == reference(columns)


def test_all_null_columns() -> None:
    columns = [pa.nulls(5, type=pa.string()), pa.array(["a"] * 5)] * 2
    assert rows_digest(columns) == reference(columns)
