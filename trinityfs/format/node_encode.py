"""Encoding node files (FORMAT.md section 4): a NodeFile to Arrow IPC bytes.

The key table and buffer checks are memoised across commits (a root is re-encoded on
every commit with mostly the same rows); the layout is described in nodefile.py.
"""

from __future__ import annotations

import operator

import pyarrow as pa

from trinityfs.errors import InvalidArgumentError
from trinityfs.format.integrity import (
    ROWS_DIGEST_KEY,
    rows_digest,
)
from trinityfs.format.ipcfile import (
    Body,
    Segment,
    body_of,
    concat_segments,
    segment,
    write_node_ipc,
    write_with_body,
)
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_N_KEYS,
    SYSTEM_KEYS,
)
from trinityfs.format.nodefile import (
    LOCATION_SYSTEM_KEYS,
    MAX_VERSION,
    SCHEMA,
    NodeFile,
    _check_order,
    _first,
    _first_unsafe,
    _is_decimal,
    vectorised,
)
from trinityfs.format.paths import (
    all_plainly_safe,
    unsafe_location_problem,
)


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


# -- what the encoder checked lately ----------------------------------------------------
#
# Every commit encodes a new root that repeats most of the previous one: the same key
# table and the previous buffer plus this commit's messages. The encoder remembers the
# last few key tables and buffers it checked, holding the very objects it checked (so
# none can be freed and its id reused); inputs made of the *same objects* (`is`, not
# `==`: a str subclass could compare equal and still differ) need no second check. Only
# in-memory inputs of `encode_node` are remembered; decoding checks every file it reads.

_CHECKED_MAX = 4
_checked_tables: tuple[tuple[int, list, list, list | None], ...] = ()
_checked_buffers: tuple[tuple[list, list, list, list], ...] = ()


def _same_objects(new: object, old: list) -> bool:
    return type(new) is list and len(new) == len(old) and all(map(operator.is_, new, old))


def _same_message(new: object, old: tuple) -> bool:
    return new is old or (
        type(new) is tuple
        and len(new) == 3
        and new[0] is old[0]
        and new[1] is old[1]
        and new[2] is old[2]
    )


def _key_table_checked_before(node: NodeFile, order: int) -> tuple | None:
    for entry in _checked_tables:
        checked_order, keys, values, children = entry
        if (
            checked_order == order
            and _same_objects(node.keys, keys)
            and _same_objects(node.values, values)
            and (
                node.children is None
                if children is None
                else _same_objects(node.children, children)
            )
        ):
            return entry
    return None


def _remember_key_table(node: NodeFile, order: int) -> tuple:
    global _checked_tables
    children = None if node.children is None else list(node.children)
    entry = (order, list(node.keys), list(node.values), children)
    _checked_tables = (entry, *_checked_tables[: _CHECKED_MAX - 1])
    return entry


def _check_key_table(node: NodeFile, order: int) -> tuple[tuple, bool]:
    """Check the key table (unless checked before); returns its memo entry and whether
    it was checked before."""
    entry = _key_table_checked_before(node, order)
    if entry is not None:
        return entry, True
    _check_key_table_rows(node, order)
    return _remember_key_table(node, order), False


# The rows of the key tables of `_checked_tables` entries as ipcfile segments, by entry
# (held, so compared by identity): a commit's root converts only its other rows. Kept
# only for a key table encoded a second time (a root's, commit after commit), not for
# the many nodes a commit or a rebuild encodes once.
_table_segments: tuple[tuple[tuple, Segment], ...] = ()


def _key_table_segment(entry: tuple, keep: bool) -> Segment | None:
    global _table_segments
    for held, part in _table_segments:
        if held is entry:
            return part
    order, keys, values, children = entry
    k = len(keys)
    padding = [None] * (order - 1 - k)
    part = segment(
        [
            [None, *keys, *padding],
            [None, *values, *padding],
            [*(children if children is not None else [None] * (k + 1)), *padding],
            [None] * order,
        ]
    )
    if part is not None and keep:
        _table_segments = ((entry, part), *_table_segments[: _CHECKED_MAX - 1])
    return part


def _check_key_table_rows(node: NodeFile, order: int) -> None:
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


# A buffer's rows, checked: (memo entry (messages, keys, values, txns as text), how many
# leading messages are those of `prefix`, the entry of an earlier buffer they repeat).
BufferRows = tuple[tuple[list, list, list, list], int, tuple | None]


def _small_buffer_lists(buffer: list) -> BufferRows | None:
    """The checked rows of a small buffer whose messages are all plain (key str, safe
    location or None, int version) tuples; None when any is not (then `_buffer_columns`
    checks it and names the problem). The lists are the memo's: read, never change them."""
    if vectorised(len(buffer)):
        return None
    prefix, start = _checked_buffer_prefix(buffer)
    tail = _small_tail_lists(buffer[start:])
    if tail is None:
        return None
    if prefix is None:
        keys, values, txns = tail
    else:
        keys, values, txns = prefix[1] + tail[0], prefix[2] + tail[1], prefix[3] + tail[2]
    global _checked_buffers
    entry = (list(buffer), keys, values, txns)
    _checked_buffers = (entry, *_checked_buffers[: _CHECKED_MAX - 1])
    return entry, start, prefix


def _checked_buffer_prefix(buffer: list) -> tuple[tuple | None, int]:
    """The memo entry of the longest buffer checked before that `buffer` begins with
    (the same message objects), and its length; (None, 0) when there is none."""
    best: tuple[tuple | None, int] = (None, 0)
    for entry in _checked_buffers:
        messages = entry[0]
        n = len(messages)
        if best[1] < n <= len(buffer) and all(map(_same_message, buffer[:n], messages)):
            best = (entry, n)
    return best


# The messages `_small_tail_lists` checked last, by the ids of their three elements
# (each commit's root has new tuples of the same strs and ints; the tuples are held, so
# no id is reused), with their version as text: a property update replaces one message
# of the root's buffer and moves it to the end, so no checked prefix matches, yet every
# other message holds the very objects checked last commit.
_checked_messages: dict[tuple[int, int, int], tuple[tuple, str]] = {}


def _small_tail_lists(buffer: list) -> tuple[list, list, list] | None:
    global _checked_messages
    memo = _checked_messages
    checked: dict[tuple[int, int, int], tuple[tuple, str]] = {}
    keys: list[str] = []
    values: list[str | None] = []
    txns: list[str] = []
    fresh: list[str] = []
    for message in buffer:
        if type(message) is not tuple or len(message) != 3:
            return None
        key, value, txn = message
        ids = (id(key), id(value), id(txn))
        hit = memo.get(ids)
        if hit is not None and _same_message(message, hit[0]):
            text = hit[1]
        else:
            if type(key) is not str or type(txn) is not int or not 0 <= txn <= MAX_VERSION:
                return None
            if value is not None:
                if type(value) is not str:
                    return None
                fresh.append(value)
            text = str(txn)
        checked[ids] = (message, text)
        keys.append(key)
        values.append(value)
        txns.append(text)
    if fresh and not all_plainly_safe(fresh) and any(map(unsafe_location_problem, fresh)):
        return None
    _checked_messages = checked
    return keys, values, txns


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
    bad = _first_unsafe(values)
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
    system, table = _checked_head(node, order, compression)
    if not isinstance(node.buffer, list):
        raise _encode_error(f"buffer must be a list, got {type(node.buffer).__name__}")
    rows = _small_buffer_lists(node.buffer)
    if rows is not None:
        data = _encode_segments(system, table, rows, compression)
        if data is not None:
            return data
    head_keys, head_values, head_pnodes, head_txns = _head_rows(node, order, system)
    arrays = None
    if rows is not None:
        arrays = _small_columns(rows[0][1:], head_keys, head_values, head_pnodes, head_txns)
    if arrays is None:
        buf_keys, buf_values, buf_txns = _buffer_columns(node.buffer)

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
    return encode_node_arrays(arrays, compression=compression)


def node_head_rows(
    node: NodeFile, order: int, *, compression: str | None = None
) -> tuple[list, list, list, list]:
    """The checked system and key table rows of `node` (its buffer aside), as the
    key, value, pnode and txn column values (None = null)."""
    system, _ = _checked_head(node, order, compression)
    return _head_rows(node, order, system)


def _checked_head(
    node: NodeFile, order: int, compression: str | None
) -> tuple[list[tuple[str, str]], tuple[tuple, bool]]:
    """The checked system rows of `node`, and the memo entry of its checked key table
    with whether it was checked before."""
    _check_order(order)
    if compression is not None and compression not in NODE_COMPRESSIONS:
        raise InvalidArgumentError(
            f"unknown node compression {compression!r}; expected one of {NODE_COMPRESSIONS}"
        )
    if not isinstance(node, NodeFile):
        raise InvalidArgumentError(f"expected a NodeFile, got {type(node).__name__}")
    system = _system_rows(node)
    return system, _check_key_table(node, order)


def _encode_segments(
    system: list[tuple[str, str]],
    table: tuple[tuple, bool],
    rows: BufferRows,
    compression: str | None,
) -> bytes | None:
    """The node file from its checked rows without pa.array (format/ipcfile.py
    segments; the rows after the system rows kept from commit to commit); None: use
    pyarrow."""
    n_sys = len(system)
    system_part = segment(
        [[key for key, _ in system], [value for _, value in system], [None] * n_sys, [None] * n_sys]
    )
    if system_part is None:
        return None
    entry, start, prefix = rows
    body = _held_body(table[0], prefix) if prefix is not None else None
    if body is not None:  # a root repeating the previous one: convert its new messages
        _, keys, values, txns = entry
        tail = segment([keys[start:], values[start:], [None] * (len(keys) - start), txns[start:]])
        if tail is None:
            return None
        written = write_with_body(system_part, body, tail, compression, _pyarrow_node_file)
    else:
        table_part = _key_table_segment(*table)
        buffer_part = _buffer_segment(*rows)
        if table_part is None or buffer_part is None:
            return None
        joined = concat_segments(table_part, buffer_part)
        if joined is None:
            return None
        written = write_with_body(
            system_part, body_of(joined), None, compression, _pyarrow_node_file
        )
    if written is None:
        return None
    data, kept = written
    if table[1] or prefix is not None:  # encoded before, or repeating a buffer: a root's
        _hold_body(table[0], entry, kept)
    return data


# The rows after the system rows of the node files written last from a held key table
# entry and buffer entry (`ipcfile.Body`), by both entries (held, compared by identity):
# the next root with that key table and a buffer beginning with that buffer's messages
# writes only its new messages (kept for roots, like `_table_segments`).
_bodies: tuple[tuple[tuple, tuple, Body], ...] = ()


def _held_body(table_entry: tuple, buffer_entry: tuple) -> Body | None:
    for held_table, held_buffer, body in _bodies:
        if held_table is table_entry and held_buffer is buffer_entry:
            return body
    return None


def _hold_body(table_entry: tuple, buffer_entry: tuple, body: Body) -> None:
    global _bodies
    _bodies = ((table_entry, buffer_entry, body), *_bodies[: _CHECKED_MAX - 1])


# The rows of the buffers of `_checked_buffers` entries as ipcfile segments, by entry
# (held, compared by identity), for buffers that repeat an earlier one: a commit's root
# buffer is the previous root's plus this commit's messages, so only those are converted.
_buffer_segments: tuple[tuple[tuple, Segment], ...] = ()


def _buffer_segment(entry: tuple, start: int, prefix: tuple | None) -> Segment | None:
    global _buffer_segments
    head = None
    if prefix is not None:
        for held, part in _buffer_segments:
            if held is prefix:
                head = part
                break
    if head is None:
        start = 0
    _, keys, values, txns = entry
    tail = segment([keys[start:], values[start:], [None] * (len(keys) - start), txns[start:]])
    if tail is None:
        return None
    part = tail if head is None else concat_segments(head, tail)
    if part is not None and prefix is not None:  # a buffer repeating an earlier one: a root's
        _buffer_segments = ((entry, part), *_buffer_segments[: _CHECKED_MAX - 1])
    return part


def _head_rows(
    node: NodeFile, order: int, system: list[tuple[str, str]]
) -> tuple[list, list, list, list]:
    k = len(node.keys)
    n_sys = len(system)
    padding = [None] * (order - 1 - k)
    children = node.children if node.children is not None else [None] * (k + 1)
    head_keys = [key for key, _ in system] + [None] + node.keys + padding
    head_values = [value for _, value in system] + [None] + node.values + padding
    head_pnodes = [None] * n_sys + children + padding
    head_txns = [None] * (n_sys + order)
    return head_keys, head_values, head_pnodes, head_txns


def encode_node_arrays(arrays: list[pa.Array], *, compression: str | None = None) -> bytes:
    """The node file of four complete utf8 columns (head rows from `node_head_rows`,
    then the buffer): `encode_node` without a Python object per message, for a root
    holding a bulk load's messages (trinityfs/catalog/bulk.py builds the columns)."""
    # The rows checksum makes every node file, roots included, verifiable on read.
    digest = rows_digest(arrays).encode("ascii")
    data = write_node_ipc(arrays, digest, compression, _pyarrow_node_file)
    if data is None:  # a layout or codec format/ipcfile.py does not reproduce
        data, _ = _pyarrow_node_file(arrays, compression, digest)
    return data


def _pyarrow_node_file(
    arrays: list[pa.Array], compression: str | None, digest: bytes | None = None
) -> tuple[bytes, bytes]:
    """(node file, rows digest) written by pyarrow's IPC writer: the reference."""
    if digest is None:
        digest = rows_digest(arrays).encode("ascii")
    schema = SCHEMA.with_metadata({ROWS_DIGEST_KEY: digest})
    batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression, use_threads=False)
    with pa.ipc.new_file(sink, schema, options=options) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes(), digest


def _small_columns(
    lists: tuple[list, list, list],
    head_keys: list,
    head_values: list,
    head_pnodes: list,
    head_txns: list,
) -> list[pa.Array] | None:
    """The four columns built straight from Python lists (one conversion each) from a
    small plain buffer's `_small_buffer_lists`; None sends the caller to `_buffer_columns`."""
    keys, values, txns = lists
    try:
        return [
            pa.array(head_keys + keys, type=pa.string()),
            pa.array(head_values + values, type=pa.string()),
            pa.array(head_pnodes + [None] * len(keys), type=pa.string()),
            pa.array(head_txns + txns, type=pa.string()),
        ]
    except (pa.ArrowException, UnicodeError):  # e.g. a lone surrogate: say it precisely
        return None
