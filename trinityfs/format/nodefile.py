"""Node files: one Arrow IPC file per tree node (FORMAT.md section 4).

Layout, top to bottom, in four nullable utf8 columns key, value, pnode, txn:
system rows (key, value), the key table of exactly N rows for order N (row 0: null key
and value, pnode = leftmost child; rows 1..k: key, value, pnode = right child; the rest
all null), then the write buffer (key, value or null for delete, txn = version).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from trinityfs.errors import InvalidArgumentError
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_PREVIOUS_ROOT,
    KEY_ROLLBACK_FROM_ROOT,
)
from trinityfs.format.paths import (
    UNSAFE_LOCATION_PATTERN,
    all_plainly_safe,
    unsafe_location_problem,
)

COLUMNS = ("key", "value", "pnode", "txn")
SCHEMA = pa.schema([pa.field(name, pa.string(), nullable=True) for name in COLUMNS])
MIN_ORDER = 3
MAX_VERSION = (1 << 64) - 1

# System keys whose values are locations (and so must pass validate_location).
LOCATION_SYSTEM_KEYS = frozenset({KEY_LAKEHOUSE_DEF, KEY_PREVIOUS_ROOT, KEY_ROLLBACK_FROM_ROOT})
_DECIMAL = "^[0-9]+$"


@dataclass
class NodeFile:
    """The decoded content of a node file.

    `system` holds the system rows except `n_keys`, which is derived from `keys` (the
    encoder writes it, the decoder checks it). `children` has len(keys) + 1 entries for
    an internal node and is None for a leaf. `buffer` is (key, value or None for a
    delete, version of the writing commit), oldest first.
    """

    system: dict[str, str] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    children: list[str] | None = None
    buffer: list[tuple[str, str | None, int]] = field(default_factory=list)

    @property
    def is_leaf(self) -> bool:
        return self.children is None

    @property
    def created_at_millis(self) -> int:
        return int(self.system[KEY_CREATED_AT_MILLIS])


def _is_decimal(text: object) -> bool:
    """A decimal integer in 0..2^64-1 (checked by length first: int() refuses more than
    4,300 digits with a bare ValueError, and a file that lies may hold any number)."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= 20
        and text.isascii()
        and text.isdigit()
        and int(text) <= MAX_VERSION
    )


# Below this many values a column is checked by a Python loop instead of a
# pyarrow.compute kernel: each kernel call costs 10-100 us (a regex kernel compiles its
# pattern on every call), more than the loop over a small node's rows. Every commit
# encodes the root and most roots and nodes read cold are small, so this is most calls.
_VECTOR_MIN = 256


def vectorised(count: int) -> bool:
    """Whether `count` values are checked by a pyarrow.compute kernel (else a Python loop)."""
    return count >= _VECTOR_MIN


def _first(mask: pa.Array) -> int:
    """Index of the first true entry of a boolean array (nulls count as false), or -1."""
    if not mask.true_count:  # a cheap popcount; the common answer
        return -1
    return pc.index(mask, True).as_py()  # a null never equals True


def _first_unsafe(column: pa.Array, rows: list | None = None) -> int:
    """Index of the first non-null value of a string column (or of `rows`, the same
    values as a list) that is not a safe location, or -1: one regex kernel over a large
    column, unsafe_location_problem per value over a small one (the same rules)."""
    if rows is None and vectorised(len(column) - column.null_count):
        return _first(pc.match_substring_regex(column, UNSAFE_LOCATION_PATTERN))
    values = column.to_pylist() if rows is None else rows
    present = [value for value in values if value is not None]
    if not present or all_plainly_safe(present):  # one regex pass: the common answer
        return -1
    for i, value in enumerate(values):
        if value is not None and unsafe_location_problem(value) is not None:
            return i
    return -1


def _check_order(order: object) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < MIN_ORDER:
        raise InvalidArgumentError(f"tree order must be an int >= {MIN_ORDER}, got {order!r}")
    return order
