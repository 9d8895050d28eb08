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

from trinityfs.errors import CorruptFileError, InvalidArgumentError, UnsafeLocationError
from trinityfs.format.integrity import (
    verify_named_content,
    verify_rows_digest,
    with_rows_digest,
)
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_N_KEYS,
    KEY_PREVIOUS_ROOT,
    KEY_ROLLBACK_FROM_ROOT,
    SYSTEM_KEYS,
)
from trinityfs.format.paths import UNSAFE_LOCATION_PATTERN, unsafe_location_problem

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
    return isinstance(text, str) and text.isascii() and text.isdigit()


def _first(mask: pa.Array) -> int:
    """Index of the first true entry of a boolean array (nulls count as false), or -1."""
    return pc.index(pc.fill_null(mask, False), True).as_py()


def _check_order(order: object) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < MIN_ORDER:
        raise InvalidArgumentError(f"tree order must be an int >= {MIN_ORDER}, got {order!r}")
    return order


# ---------------------------------------------------------------------------- encoding


def _encode_error(problem: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"cannot encode node: {problem}")


def _check_encode_location(loc: object, what: str) -> None:
    problem = unsafe_location_problem(loc)
    if problem is not None:
        raise _encode_error(f"{what}: {problem}")


def _system_rows(node: NodeFile) -> list[tuple[str, str]]:
    system = node.system
    if not isinstance(system, dict):
        raise _encode_error(f"system must be a dict, got {type(system).__name__}")
    for key, value in system.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise _encode_error(f"system row {key!r}: key and value must be str, got {value!r}")
        if key in LOCATION_SYSTEM_KEYS:
            _check_encode_location(value, f"system row {key}")
    created = system.get(KEY_CREATED_AT_MILLIS)
    if not _is_decimal(created):
        raise _encode_error(
            f"system row {KEY_CREATED_AT_MILLIS} must be a non-negative decimal integer, "
            f"got {created!r}"
        )
    n_keys = str(len(node.keys))
    if system.get(KEY_N_KEYS, n_keys) != n_keys:
        raise _encode_error(
            f"system row {KEY_N_KEYS}={system[KEY_N_KEYS]!r} disagrees with {n_keys} keys"
        )
    full = {**system, KEY_N_KEYS: n_keys}
    ordered = [key for key in SYSTEM_KEYS if key in full]
    ordered += sorted(key for key in full if key not in SYSTEM_KEYS)
    return [(key, full[key]) for key in ordered]


def _check_key_table(node: NodeFile, order: int) -> None:
    keys, values, children = node.keys, node.values, node.children
    if not isinstance(keys, list) or not isinstance(values, list):
        raise _encode_error("keys and values must be lists")
    if len(keys) != len(values):
        raise _encode_error(f"{len(keys)} keys but {len(values)} values")
    if len(keys) > order - 1:
        raise _encode_error(f"{len(keys)} keys exceed the maximum of {order - 1} for order {order}")
    previous = None
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        if not isinstance(key, str):
            raise _encode_error(f"key {i} must be a str, got {key!r}")
        if previous is not None and not previous < key:
            raise _encode_error(f"keys are not strictly ascending: {previous!r} then {key!r}")
        previous = key
        _check_encode_location(value, f"value of key {key!r}")
    if children is not None:
        if not isinstance(children, list) or len(children) != len(keys) + 1:
            raise _encode_error(
                f"an internal node with {len(keys)} keys needs {len(keys) + 1} children, "
                f"got {children!r:.200}"
            )
        for i, child in enumerate(children):
            _check_encode_location(child, f"child {i}")


_BUFFER_TYPE = pa.struct([("key", pa.string()), ("value", pa.string()), ("txn", pa.uint64())])


def _buffer_columns(buffer: list) -> tuple[pa.Array, pa.Array, pa.Array]:
    if not isinstance(buffer, list):
        raise _encode_error(f"buffer must be a list, got {type(buffer).__name__}")
    try:
        # One C-level pass converts and type-checks every message.
        messages = pa.array(buffer, type=_BUFFER_TYPE)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise _encode_error(
            f"buffer entries must be (key str, value str or None, txn 0..2^64-1): {exc}"
        ) from None
    if messages.null_count:
        raise _encode_error(f"buffer message {_first(messages.is_null())} is None")
    # pyarrow truncates floats to uint64 silently; versions must be real ints.
    txn_types = {type(message[2]) for message in buffer}
    if txn_types - {int}:
        raise _encode_error(
            f"buffer txn must be an int, got {sorted(t.__name__ for t in txn_types)}"
        )
    keys, values, txns = (messages.field(i) for i in range(3))
    if keys.null_count:
        raise _encode_error(f"buffer message {_first(keys.is_null())} has no key")
    bad = _first(pc.match_substring_regex(values, UNSAFE_LOCATION_PATTERN))
    if bad >= 0:
        _check_encode_location(values[bad].as_py(), f"buffer message {bad}")
    return keys, values, txns.cast(pa.string())


# Arrow IPC body compressions a writer may use (the reader handles any, transparently).
NODE_COMPRESSIONS = ("zstd", "lz4")


def encode_node(node: NodeFile, order: int, *, compression: str | None = None) -> bytes:
    """Serialize `node` for a tree of `order`; raises InvalidArgumentError if inconsistent.

    `compression` ("zstd", "lz4" or None) compresses the record batch body with Arrow
    IPC's own buffer compression: still one Arrow IPC file, read by any Arrow reader
    with the codec (padded keys shrink about 5x).
    """
    _check_order(order)
    if compression is not None and compression not in NODE_COMPRESSIONS:
        raise InvalidArgumentError(
            f"unknown node compression {compression!r}; expected one of {NODE_COMPRESSIONS}"
        )
    if not isinstance(node, NodeFile):
        raise InvalidArgumentError(f"expected a NodeFile, got {type(node).__name__}")
    system = _system_rows(node)
    _check_key_table(node, order)
    buf_keys, buf_values, buf_txns = _buffer_columns(node.buffer)

    k = len(node.keys)
    n_sys = len(system)
    padding = [None] * (order - 1 - k)
    children = node.children if node.children is not None else [None] * (k + 1)
    head_keys = [key for key, _ in system] + [None] + node.keys + padding
    head_values = [value for _, value in system] + [None] + node.values + padding
    head_pnodes = [None] * n_sys + children + padding
    head_txns = [None] * (n_sys + order)

    def column(head: list, tail: pa.Array | None, tail_len: int) -> pa.Array:
        head_arr = pa.array(head, type=pa.string())
        if tail is None:
            tail = pa.nulls(tail_len, type=pa.string())
        return pa.concat_arrays([head_arr, tail])

    n_buf = len(buf_keys)
    arrays = [
        column(head_keys, buf_keys, n_buf),
        column(head_values, buf_values, n_buf),
        column(head_pnodes, None, n_buf),
        column(head_txns, buf_txns, n_buf),
    ]
    # The rows checksum makes every node file, roots included, verifiable on read.
    schema = with_rows_digest(SCHEMA, arrays)
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(sink, schema, options=options) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


# ---------------------------------------------------------------------------- decoding


def _read_table(data: bytes, path: str) -> pa.Table:
    try:
        with pa.ipc.open_file(pa.py_buffer(data)) as reader:
            table = reader.read_all()
        # Full validation checks offsets and UTF-8, so hostile bytes cannot reach the
        # compute kernels below.
        table.validate(full=True)
    except Exception as exc:  # any failure to parse means the file is not a node file
        raise CorruptFileError(
            path, f"not a readable Arrow IPC file ({type(exc).__name__}: {exc})"
        ) from None
    if table.schema.names != list(COLUMNS):
        raise CorruptFileError(path, f"columns are {table.schema.names}, expected {list(COLUMNS)}")
    for column_field in table.schema:
        if column_field.type != pa.string():
            raise CorruptFileError(
                path, f"column {column_field.name} has type {column_field.type}, expected utf8"
            )
    return table


def _check_location(loc: str, path: str, where: str) -> str:
    problem = unsafe_location_problem(loc)
    if problem is not None:
        raise UnsafeLocationError(path, f"{where}: {problem}")
    return loc


def _decode_system(cols: list[pa.Array], start: int, path: str) -> dict[str, str]:
    keys, values, pnodes, txns = (col.slice(0, start).to_pylist() for col in cols)
    system: dict[str, str] = {}
    for row, (key, value, pnode, txn) in enumerate(zip(keys, values, pnodes, txns, strict=True)):
        if key is None or value is None or pnode is not None or txn is not None:
            raise CorruptFileError(
                path,
                f"row {row} is a system row (before the key table) but does not have "
                f"exactly key and value set",
            )
        if key in system:
            raise CorruptFileError(path, f"row {row}: system key {key!r} appears twice")
        if key in LOCATION_SYSTEM_KEYS:
            _check_location(value, path, f"row {row} ({key})")
        system[key] = value
    for key in (KEY_N_KEYS, KEY_CREATED_AT_MILLIS):
        if key not in system:
            raise CorruptFileError(path, f"system row {key} is missing")
        if not _is_decimal(system[key]):
            raise CorruptFileError(
                path, f"system row {key}={system[key]!r} is not a non-negative decimal integer"
            )
    return system


def _decode_key_table(
    cols: list[pa.Array], start: int, size: int, path: str
) -> tuple[list[str], list[str], list[str] | None]:
    for column, what in ((cols[1], "value"), (cols[2], "child pointer")):
        rows = column.slice(start, size)
        bad = _first(pc.match_substring_regex(rows, UNSAFE_LOCATION_PATTERN))
        if bad >= 0:  # one vectorized scan instead of a regex per row
            _check_location(rows[bad].as_py(), path, f"row {start + bad} ({what})")
    keys, values, pnodes, txns = (col.slice(start, size).to_pylist() for col in cols)
    leftmost = pnodes[0]
    internal = leftmost is not None
    k = 0
    while k + 1 < size and keys[k + 1] is not None:
        k += 1
    for i in range(size):
        row = start + i
        if txns[i] is not None:
            raise CorruptFileError(path, f"row {row} in the key table has a txn")
        if 1 <= i <= k:
            if values[i] is None:
                raise CorruptFileError(path, f"row {row}: key {keys[i]!r} has no value")
            if i > 1 and not keys[i - 1] < keys[i]:
                raise CorruptFileError(
                    path,
                    f"row {row}: keys are not strictly ascending "
                    f"({keys[i - 1]!r} then {keys[i]!r})",
                )
            if internal and pnodes[i] is None:
                raise CorruptFileError(
                    path, f"row {row}: internal node key {keys[i]!r} has no child pointer"
                )
            if not internal and pnodes[i] is not None:
                raise CorruptFileError(
                    path, f"row {row}: leaf node key {keys[i]!r} has a child pointer"
                )
        elif i > k and (keys[i] is not None or values[i] is not None or pnodes[i] is not None):
            raise CorruptFileError(
                path, f"row {row}: unused key table row (after {k} keys) is not all null"
            )
    children = pnodes[: k + 1] if internal else None
    return keys[1 : k + 1], values[1 : k + 1], children


def _decode_buffer(
    cols: list[pa.Array], start: int, path: str
) -> list[tuple[str, str | None, int]]:
    keys, values, pnodes, txns = (col.slice(start) for col in cols)
    if keys.null_count:
        raise CorruptFileError(
            path, f"row {start + _first(keys.is_null())}: buffer message has no key"
        )
    if pnodes.null_count != len(pnodes):
        raise CorruptFileError(
            path, f"row {start + _first(pnodes.is_valid())}: buffer message has a pnode"
        )
    if txns.null_count:
        raise CorruptFileError(
            path, f"row {start + _first(txns.is_null())}: buffer message has no txn"
        )
    bad = _first(pc.invert(pc.match_substring_regex(txns, _DECIMAL)))
    if bad >= 0:
        raise CorruptFileError(
            path,
            f"row {start + bad}: buffer txn {txns[bad].as_py()!r} is not a "
            f"non-negative decimal integer",
        )
    bad = _first(pc.match_substring_regex(values, UNSAFE_LOCATION_PATTERN))
    if bad >= 0:
        _check_location(values[bad].as_py(), path, f"row {start + bad} (buffer value)")
    try:
        versions = pc.cast(txns, pa.uint64()).to_pylist()
    except pa.ArrowException:
        raise CorruptFileError(path, "a buffer txn does not fit in 64 bits") from None
    return list(zip(keys.to_pylist(), values.to_pylist(), versions, strict=True))


def decode_node(data: bytes, order: int | None, path: str) -> NodeFile:
    """Parse and fully verify a node file; raises CorruptFileError naming `path`.

    With `order` None the key table size is inferred: it runs from the first row with
    null key and value up to the first row with a txn (or the end of the file).
    Locations are checked with validate_location's rules (UnsafeLocationError). The
    bytes are verified against the content hash in the file name when it has one, else
    the rows against the checksum the file carries (format/integrity.py); a file with
    neither (another writer, older trinityfs) gets the structural checks only.
    """
    if order is not None:
        _check_order(order)
    named = verify_named_content(path, data)
    table = _read_table(data, path)
    cols = [table.column(name).combine_chunks() for name in COLUMNS]
    if not named:
        verify_rows_digest(table.schema, cols, path)
    n_rows = table.num_rows
    start = _first(pc.and_(cols[0].is_null(), cols[1].is_null()))
    if start < 0:
        raise CorruptFileError(path, "no key table (no row with both key and value null)")
    if order is None:
        end = _first(cols[3].slice(start).is_valid())
        size = n_rows - start if end < 0 else end
        if size < MIN_ORDER:
            raise CorruptFileError(
                path, f"key table has {size} rows; a tree needs order >= {MIN_ORDER}"
            )
    else:
        size = order
        if start + size > n_rows:
            raise CorruptFileError(
                path,
                f"key table at row {start} needs {order} rows for order {order}, "
                f"but the file ends after {n_rows - start}",
            )
    system = _decode_system(cols, start, path)
    keys, values, children = _decode_key_table(cols, start, size, path)
    if int(system[KEY_N_KEYS]) != len(keys):
        raise CorruptFileError(
            path, f"n_keys is {system[KEY_N_KEYS]} but the key table holds {len(keys)} keys"
        )
    buffer = _decode_buffer(cols, start + size, path)
    del system[KEY_N_KEYS]
    return NodeFile(system=system, keys=keys, values=values, children=children, buffer=buffer)
