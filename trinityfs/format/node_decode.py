"""Decoding node files (FORMAT.md section 4): Arrow IPC bytes to a checked NodeFile.

Every row is validated (key table shape, locations, versions, digests) so that a file
that lies fails with CorruptFileError naming it; the layout is described in nodefile.py.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from trinityfs.errors import CorruptFileError, UnsafeLocationError
from trinityfs.format.integrity import (
    verify_named_content,
    verify_rows_digest,
)
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_N_KEYS,
    KEY_PREVIOUS_ROOT,
)
from trinityfs.format.nodefile import (
    _DECIMAL,
    COLUMNS,
    LOCATION_SYSTEM_KEYS,
    MAX_VERSION,
    MIN_ORDER,
    NodeFile,
    _check_order,
    _first,
    _first_unsafe,
    _is_decimal,
    vectorised,
)
from trinityfs.format.paths import (
    parse_root_node_file,
    root_node_file,
    unsafe_location_problem,
)

# One node file's dozen buffers are (de)compressed on the calling thread: handing each
# to Arrow's thread pool costs more than the work (about 2x per small file measured);
# readers wanting parallelism decode several files at once instead.
# decode_node returns Arrow's freed memory to the system after files this large
RELEASE_AFTER_BYTES = 4 << 20
_READ_OPTIONS = pa.ipc.IpcReadOptions(use_threads=False)


def _read_table(data: bytes, path: str) -> pa.Table:
    try:
        with pa.ipc.open_file(pa.py_buffer(data), options=_READ_OPTIONS) as reader:
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
                path,
                f"system row {key}={_shown(system[key])} is not a non-negative decimal "
                "integer below 2^64",
            )
    return system


def _shown(text: str) -> str:
    """`text` quoted, cut short: a file that lies may hold megabytes in one cell."""
    return repr(text) if len(text) <= 40 else repr(text[:24]) + f"... ({len(text)} chars)"


def _check_root_identity(system: dict[str, str], path: str) -> None:
    """A root read under the name of version v must name the root of v-1 as its
    previous_root (version 0: none; FORMAT.md section 4). Otherwise it is another
    version's root copied, renamed, restored or planted under this name, and reading
    it as version v would be a silent wrong answer."""
    version = parse_root_node_file(path.rpartition("/")[2])
    if version is None:
        return  # not read under a root's name (an export root, a test's file)
    previous = system.get(KEY_PREVIOUS_ROOT)
    expected = root_node_file(version - 1) if version > 0 else None
    if previous == expected:
        return
    found = parse_root_node_file(previous) if previous is not None else None
    what = "no previous_root" if previous is None else f"previous_root {previous!r}"
    if found is not None:
        what += f" (version {found})"
    should = "none" if expected is None else f"{expected!r} (version {version - 1})"
    raise CorruptFileError(
        path,
        f"the root of version {version} has {what}, but it must name {should}: another "
        "version's root copied, renamed or restored under this name",
    )


def _decode_key_table(
    cols: list[pa.Array], start: int, size: int, path: str
) -> tuple[list[str], list[str], list[str] | None]:
    keys, values, pnodes, txns = (col.slice(start, size).to_pylist() for col in cols)
    for column, rows, what in ((cols[1], values, "value"), (cols[2], pnodes, "child pointer")):
        vector = vectorised(size)  # one regex kernel over a large key table
        bad = _first_unsafe(column.slice(start, size), None if vector else rows)
        if bad >= 0:
            _check_location(rows[bad], path, f"row {start + bad} ({what})")
    leftmost = pnodes[0]
    internal = leftmost is not None
    k = 0
    while k + 1 < size and keys[k + 1] is not None:
        k += 1
    if not _key_table_well_formed(keys, values, pnodes, txns, k, internal):
        _raise_key_table_problem(keys, values, pnodes, txns, start, size, k, internal, path)
    children = pnodes[: k + 1] if internal else None
    return keys[1 : k + 1], values[1 : k + 1], children


def _key_table_well_formed(
    keys: list, values: list, pnodes: list, txns: list, k: int, internal: bool
) -> bool:
    """The checks of `_raise_key_table_problem` for a well-formed key table, in a few
    C-level passes (most tables are well formed; that function then names the row)."""
    size = len(keys)
    unused = size - k - 1
    return (
        txns.count(None) == size
        and None not in values[1 : k + 1]
        and keys[k + 1 :].count(None) == unused
        and values[k + 1 :].count(None) == unused
        and pnodes[k + 1 :].count(None) == unused
        and (None not in pnodes[1 : k + 1] if internal else pnodes.count(None) == size)
        and all(map(operator.lt, keys[1:k], keys[2 : k + 1]))
    )


def _raise_key_table_problem(
    keys: list,
    values: list,
    pnodes: list,
    txns: list,
    start: int,
    size: int,
    k: int,
    internal: bool,
    path: str,
) -> None:
    """Raise CorruptFileError naming the first bad row of the key table."""
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
    raise AssertionError("a key table failed a check no row fails")  # the two disagree


@dataclass(frozen=True)
class BufferColumns:
    """A node's write buffer left as Arrow arrays (verified like a decoded one): keys,
    values (null = delete) and versions (uint64), in file order. `decode_node` returns
    it instead of a list for buffers of at least `columns_from` messages, so that a
    bulk load's root (a million messages) costs no Python object per message."""

    keys: pa.Array
    values: pa.Array
    versions: pa.Array


def _decode_buffer(
    cols: list[pa.Array], start: int, path: str, columns_from: int | None = None
) -> list[tuple[str, str | None, int]] | BufferColumns:
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
    if vectorised(len(txns)):
        bad = _first(pc.invert(pc.match_substring_regex(txns, _DECIMAL)))
    else:
        texts = txns.to_pylist()
        bad = next((i for i, t in enumerate(texts) if not (t.isascii() and t.isdigit())), -1)
    if bad >= 0:
        raise CorruptFileError(
            path,
            f"row {start + bad}: buffer txn {_shown(txns[bad].as_py())} is not a "
            f"non-negative decimal integer",
        )
    bad = _first_unsafe(values)
    if bad >= 0:
        _check_location(values[bad].as_py(), path, f"row {start + bad} (buffer value)")
    if vectorised(len(txns)):
        try:
            version_array = pc.cast(txns, pa.uint64())
        except pa.ArrowException:
            raise CorruptFileError(path, "a buffer txn does not fit in 64 bits") from None
        if columns_from is not None and len(txns) >= columns_from:
            return BufferColumns(keys, values, version_array)
        versions = version_array.to_pylist()
    else:
        if any(len(t) > 20 for t in texts):  # int() refuses > 4,300 digits, bare
            raise CorruptFileError(path, "a buffer txn does not fit in 64 bits")
        versions = [int(t) for t in texts]
        if any(v > MAX_VERSION for v in versions):
            raise CorruptFileError(path, "a buffer txn does not fit in 64 bits")
    return list(zip(keys.to_pylist(), values.to_pylist(), versions, strict=True))


def _key_table_start(cols: list[pa.Array]) -> int:
    """The first row with both key and value null (row 0 of the key table), or -1.
    System rows are few, so the first rows are looked at in Python."""
    head = min(len(cols[0]), 64)
    keys, values = cols[0].slice(0, head).to_pylist(), cols[1].slice(0, head).to_pylist()
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        if key is None and value is None:
            return i
    if head == len(cols[0]):
        return -1
    return _first(pc.and_(cols[0].is_null(), cols[1].is_null()))


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array: a node file has one record batch, whose arrays are used
    as they are (combine_chunks copies even one chunk: a large root's columns twice)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def decode_node(
    data: bytes, order: int | None, path: str, *, buffer_columns_from: int | None = None
) -> NodeFile:
    """Parse and fully verify a node file; see `_decode_node`.

    With `buffer_columns_from`, a buffer of at least that many messages is returned as
    `BufferColumns` (Arrow arrays) instead of a list of tuples.

    After a large file (a bulk-loaded root: hundreds of MB of columns) the Arrow memory
    its columns used is handed back to the system at once: the allocator keeps freed
    pages otherwise, and the Python objects decoded from them cannot reuse those."""
    node = _decode_node(data, order, path, buffer_columns_from)
    if len(data) >= RELEASE_AFTER_BYTES:
        pa.default_memory_pool().release_unused()
    return node


def _decode_node(
    data: bytes, order: int | None, path: str, buffer_columns_from: int | None = None
) -> NodeFile:
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
    cols = [_one_array(table.column(name)) for name in COLUMNS]
    if not named:
        verify_rows_digest(table.schema, cols, path)
    n_rows = table.num_rows
    start = _key_table_start(cols)
    if start < 0:
        raise CorruptFileError(path, "no key table (no row with both key and value null)")
    if order is None:
        txns = cols[3].slice(start)
        if vectorised(len(txns)):
            end = _first(txns.is_valid())
        else:
            end = next((i for i, txn in enumerate(txns.to_pylist()) if txn is not None), -1)
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
    if KEY_LAKEHOUSE_DEF in system:  # a root
        _check_root_identity(system, path)
    keys, values, children = _decode_key_table(cols, start, size, path)
    if int(system[KEY_N_KEYS]) != len(keys):
        raise CorruptFileError(
            path, f"n_keys is {system[KEY_N_KEYS]} but the key table holds {len(keys)} keys"
        )
    buffer = _decode_buffer(cols, start + size, path, buffer_columns_from)
    del system[KEY_N_KEYS]
    return NodeFile(system=system, keys=keys, values=values, children=children, buffer=buffer)
