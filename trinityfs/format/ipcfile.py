"""The Arrow IPC file of a node, written without Arrow's IPC writer: the same bytes.

Every commit encodes a root, and pyarrow's writer spends most of that on per-file
setup: with zstd it builds a compression context for each of the twelve buffers
(measured: ~145 us of a ~1 ms create, the buffers themselves a third of it). A node
file always has the same shape (four nullable utf8 columns, one record batch, the rows
digest in the schema metadata, FORMAT.md section 4), so this module takes the framing
from one file pyarrow writes for a sample node (the schema message, the record batch
message's flatbuffer, the footer), patches the numbers and the digest that change
(record batch length, field nodes, buffer offsets and lengths, body length), and
compresses the buffers with one reused zstd context per thread.

The output is byte-identical to pyarrow's: before the first use, each template writes
sample nodes both ways and compares (`_self_check`), and tests compare random nodes;
on any difference, an unknown pyarrow layout, lz4, a missing `zstandard` module, or
arrays not laid out as pyarrow builds them from lists, `write_node_ipc` returns None
and the caller uses pyarrow's writer.
"""

from __future__ import annotations

import struct
import sys
import threading
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple

import pyarrow as pa

from trinityfs.format.integrity import rows_digest_prefix

try:  # optional: pyarrow has no reusable codec context (Codec.compress makes one a call)
    import zstandard
except ImportError:  # pragma: no cover - then zstd node files use pyarrow's writer
    zstandard = None

_CONTINUATION = b"\xff\xff\xff\xff"
_ZSTD_LEVEL = 1  # pyarrow's default zstd level, the one IpcWriteOptions(compression="zstd") uses
_PAD = bytes(8)
# Files of more rows (a bulk load's root: a row per object) are left to pyarrow's
# writer, which compresses into Arrow's memory and copies the file out once; this
# module would hold the compressed buffers as Python bytes beside the joined file. A
# commit's root (order + system rows + a buffer of at most a few hundred) stays below.
MAX_ROWS = 2048


def _u32(buf: bytes, at: int) -> int:
    return struct.unpack_from("<I", buf, at)[0]


def _table_field(buf: bytes, table: int, index: int) -> int | None:
    """Absolute position of field `index` of the flatbuffer table at `table`, or None."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vt_size = struct.unpack_from("<H", buf, vtable)[0]
    if 4 + 2 * index >= vt_size:
        return None
    rel = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)[0]
    return None if rel == 0 else table + rel


def _deref(buf: bytes, at: int) -> int:
    return at + _u32(buf, at)


@dataclass(frozen=True)
class _Template:
    head: bytes  # magic + schema message
    head_digest_at: int
    meta: bytes  # the record batch message's prefix and flatbuffer
    length_at: int
    nodes_at: int
    buffers_at: int
    body_length_at: int
    footer: bytes  # EOS marker + footer flatbuffer + its length + magic
    footer_digest_at: int
    block_body_length_at: int


def _fail(why: str) -> ValueError:
    return ValueError(f"unexpected pyarrow IPC layout: {why}")


def _template_from(data: bytes, digest: bytes, n_columns: int) -> _Template:
    """The framing of `data`, a node file pyarrow wrote with schema digest `digest`."""
    if not data.startswith(b"ARROW1\x00\x00") or data[8:12] != _CONTINUATION:
        raise _fail("no magic or schema message")
    schema_end = 16 + struct.unpack_from("<i", data, 12)[0]
    head = data[:schema_end]
    if head.count(digest) != 1:
        raise _fail("digest not found once in the schema")
    if data[schema_end : schema_end + 4] != _CONTINUATION:
        raise _fail("no record batch message")
    meta_len = struct.unpack_from("<i", data, schema_end + 4)[0]
    meta = data[schema_end : schema_end + 8 + meta_len]
    fb = meta[8:]
    message = _deref(fb, 0)
    header_type = _table_field(fb, message, 1)
    if header_type is None or fb[header_type] != 3:  # MessageHeader.RecordBatch
        raise _fail("second message is not a record batch")
    header = _table_field(fb, message, 2)
    body_len_at = _table_field(fb, message, 3)
    if header is None or body_len_at is None:
        raise _fail("record batch message without header or body length")
    batch = _deref(fb, header)
    length_at = _table_field(fb, batch, 0)
    nodes = _table_field(fb, batch, 1)
    buffers = _table_field(fb, batch, 2)
    if length_at is None or nodes is None or buffers is None:
        raise _fail("record batch without length, nodes or buffers")
    nodes_vec, buffers_vec = _deref(fb, nodes), _deref(fb, buffers)
    if _u32(fb, nodes_vec) != n_columns or _u32(fb, buffers_vec) != 3 * n_columns:
        raise _fail("record batch with other node or buffer counts")
    body_length = struct.unpack_from("<q", fb, body_len_at)[0]
    rest_at = schema_end + 8 + meta_len + body_length
    rest = data[rest_at:]
    if not rest.startswith(_CONTINUATION + bytes(4)) or not rest.endswith(b"ARROW1"):
        raise _fail("no end-of-stream marker or trailing magic")
    footer_len = struct.unpack_from("<i", rest, len(rest) - 10)[0]
    footer_at = len(rest) - 10 - footer_len
    if footer_at != 8 or rest.count(digest) != 1:
        raise _fail("footer not where expected, or digest not found once in it")
    ffb = rest[8 : 8 + footer_len]
    root = _deref(ffb, 0)
    blocks = _table_field(ffb, root, 3)
    if blocks is None:
        raise _fail("footer without record batch blocks")
    blocks_vec = _deref(ffb, blocks)
    if _u32(ffb, blocks_vec) != 1:
        raise _fail("footer with more than one record batch")
    block = blocks_vec + 4  # Block {offset: long, metaDataLength: int, pad, bodyLength: long}
    if struct.unpack_from("<q", ffb, block)[0] != schema_end:
        raise _fail("record batch block offset")
    if struct.unpack_from("<q", ffb, block + 16)[0] != body_length:
        raise _fail("record batch block body length")
    return _Template(
        head=head,
        head_digest_at=head.index(digest),
        meta=meta,
        length_at=8 + length_at,
        nodes_at=8 + nodes_vec + 4,
        buffers_at=8 + buffers_vec + 4,
        body_length_at=8 + body_len_at,
        footer=rest,
        footer_digest_at=rest.index(digest),
        block_body_length_at=8 + block + 16,
    )


class _Compressors(threading.local):
    """One zstd compression context per thread (a context is not thread-safe)."""

    def __init__(self) -> None:
        self.zstd = None if zstandard is None else zstandard.ZstdCompressor(level=_ZSTD_LEVEL)


_compressors = _Compressors()


def _exact_buffers(arr: pa.Array) -> list[memoryview] | None:
    """The validity, offsets and data bytes Arrow's writer puts in the body for a
    utf8 array laid out as pa.array builds it from a list (no offset, exact buffer
    sizes); None for any other layout (then the caller uses pyarrow's writer)."""
    if arr.offset or arr.type != pa.string():
        return None
    n = len(arr)
    validity, offsets, data = arr.buffers()
    if offsets is None or offsets.size != 4 * (n + 1):
        return None
    ends = memoryview(offsets)
    if int.from_bytes(ends[:4], "little") != 0:
        return None
    total = int.from_bytes(ends[-4:], "little")
    if (0 if data is None else data.size) != total:
        return None
    if arr.null_count:
        if validity is None or validity.size != (n + 7) // 8:
            return None
        bitmap = memoryview(validity)
    else:
        bitmap = memoryview(b"")
    return [bitmap, ends, memoryview(b"") if data is None else memoryview(data)]


Column = tuple[int, int, list]  # (rows, nulls, [validity, offsets, data] bytes-like)


def _array_columns(arrays: list[pa.Array]) -> list[Column] | None:
    n = len(arrays[0])
    columns = []
    for arr in arrays:
        buffers = _exact_buffers(arr) if len(arr) == n else None
        if buffers is None:
            return None
        columns.append((n, arr.null_count, buffers))
    return columns


# Buffers shorter than this are stored uncompressed inside the compressed body (Arrow
# IPC's BodyCompression lets a buffer's uncompressed length be -1: "not compressed";
# Arrow C++'s writer does the same under IpcWriteOptions.min_space_savings). A zstd
# frame costs more than the bytes it could save on them (validity bitmaps, a buffer's
# few version numbers) and a compression call each (docs/FORMAT-CHOICES.md, "Node
# files: small buffers stored uncompressed").
RAW_BELOW_BYTES = 64
_RAW = struct.pack("<q", -1)


class _Codec(NamedTuple):
    compress: Callable[[bytes], bytes]
    raw_below: int  # buffers shorter than this are stored uncompressed (length -1)


def _body(columns: list[Column], t: _Template, codec: _Codec | None) -> tuple[bytearray, list, int]:
    compress, raw_below = codec if codec is not None else (None, 0)
    meta = bytearray(t.meta)
    struct.pack_into("<q", meta, t.length_at, columns[0][0])
    parts: list = []
    nodes: list[int] = []  # FieldNode {length, null_count} per column
    slots: list[int] = []  # Buffer {offset, length} per buffer
    offset = 0
    for rows, nulls, buffers in columns:
        nodes += (rows, nulls)
        for raw in buffers:
            size = len(raw)
            if size and compress is not None:
                if size < raw_below:
                    parts.append(_RAW)
                    parts.append(raw)
                    size += 8
                else:
                    parts.append(struct.pack("<q", size))
                    packed = compress(raw)
                    parts.append(packed)
                    size = 8 + len(packed)
            elif size:
                parts.append(raw)
            slots += (offset, size)
            pad = -size % 8
            if pad:
                parts.append(_PAD[:pad])
            offset += size + pad
    struct.pack_into(f"<{len(nodes)}q", meta, t.nodes_at, *nodes)
    struct.pack_into(f"<{len(slots)}q", meta, t.buffers_at, *slots)
    struct.pack_into("<q", meta, t.body_length_at, offset)
    return meta, parts, offset


def _assemble_columns(
    columns: list[Column], digest: bytes, t: _Template, codec: _Codec | None
) -> bytes:
    meta, parts, body_length = _body(columns, t, codec)
    footer = bytearray(t.footer)
    struct.pack_into("<q", footer, t.block_body_length_at, body_length)
    footer[t.footer_digest_at : t.footer_digest_at + len(digest)] = digest
    head = t.head
    at = t.head_digest_at
    return b"".join([head[:at], digest, head[at + len(digest) :], meta, *parts, footer])


def _assemble(
    arrays: list[pa.Array], digest: bytes, t: _Template, codec: _Codec | None
) -> bytes | None:
    columns = _array_columns(arrays)
    if columns is None:
        return None
    return _assemble_columns(columns, digest, t, codec)


_templates: dict[str | None, _Template | None] = {}
_templates_lock = threading.Lock()


def _sample_columns() -> list[list[list[str | None]]]:
    """Sample nodes for the templates and the self-check: a leaf, an internal node with
    a buffer (a column of nulls only), and one whose buffer holds deletes."""
    leaf = [
        ["n_keys", "created_at_millis", None, "B===a", None, None],
        ["1", "1700000000000", None, "loc/a.binpb", None, None],
        [None] * 6,
        [None] * 6,
    ]
    internal = [
        ["sys", "n_keys", None, "C===x" + " " * 40, None, "D===y", "D===z"],
        ["_lakehouse_def_0.binpb", "1", None, "v/x.binpb", None, "v/y.binpb", None],
        [None, None, "node-l.arrow", "node-r.arrow", None, None, None],
        [None, None, None, None, None, "12", "13"],
    ]
    return [leaf, internal, [column * 40 for column in internal]]


def template_for(compression: str | None, write_with_pyarrow) -> _Template | None:
    """The template of node files written with `compression` (None or "zstd"), built
    and self-checked once; None when this module cannot reproduce pyarrow's bytes.
    `write_with_pyarrow(arrays, compression) -> (bytes, digest)` is the reference."""
    if compression in _templates:
        return _templates[compression]
    with _templates_lock:
        if compression not in _templates:
            _templates[compression] = _build_template(compression, write_with_pyarrow)
        return _templates[compression]


def _compress_for(compression: str | None, raw_below: int | None = None) -> _Codec | None:
    """This thread's codec for `compression`; `raw_below` 0 compresses every buffer, as
    pyarrow's writer does (the self-check's byte-for-byte comparison)."""
    if compression is None:
        return None
    return _Codec(_compressors.zstd.compress, RAW_BELOW_BYTES if raw_below is None else raw_below)


def _build_template(compression: str | None, write_with_pyarrow) -> _Template | None:
    if compression not in (None, "zstd") or (compression == "zstd" and zstandard is None):
        return None
    try:
        samples = [[pa.array(c, pa.string()) for c in columns] for columns in _sample_columns()]
        data, digest = write_with_pyarrow(samples[0], compression)
        template = _template_from(data, digest, len(samples[0]))
        for arrays in samples:
            expected, digest = write_with_pyarrow(arrays, compression)
            every = _compress_for(compression, raw_below=0)  # pyarrow's writer: all of them
            if _assemble(arrays, digest, template, every) != expected:
                return None
            part = segment([a.to_pylist() for a in arrays])
            if part is None or _write_segments([part], template, every) != expected:
                return None
            if compression is not None and not _reads_back(
                _write_segments([part], template, _compress_for(compression)), arrays
            ):
                return None
    except (ValueError, struct.error, IndexError, pa.ArrowException):
        return None
    return template


def _reads_back(data: bytes | None, arrays: list[pa.Array]) -> bool:
    """Whether pyarrow reads `data` (small buffers stored uncompressed) as `arrays`."""
    if data is None:
        return False
    with pa.ipc.open_file(pa.py_buffer(data)) as reader:
        table = reader.read_all()
    table.validate(full=True)
    return [column.combine_chunks() for column in table.columns] == arrays


def write_node_ipc(
    arrays: list[pa.Array], digest: bytes, compression: str | None, write_with_pyarrow
) -> bytes | None:
    """The node file of `arrays` (four utf8 columns) with rows digest `digest` (hex
    ASCII), as pyarrow's writer would write it; None when this module cannot (the
    caller then uses pyarrow's writer)."""
    if len(arrays[0]) > MAX_ROWS:
        return None
    template = template_for(compression, write_with_pyarrow)
    if template is None:
        return None
    return _assemble(arrays, digest, template, _compress_for(compression))


# -- straight from Python lists ----------------------------------------------------------
#
# A commit's root is mostly its key table (order rows, the same objects commit after
# commit) plus a few system rows and a small buffer. `Segment` holds one such run of rows
# as the pieces of its Arrow buffers and of the rows digest, so the key table's can be
# kept and only the system rows and the buffer are converted per commit; `write_segments`
# joins the runs into the node file, the digest computed on the way (integrity.py's
# definition). Without pa.array: the same buffers it builds (exact sizes, zeroed bitmap
# tail bits), checked against pyarrow's bytes by the tests.

_NATIVE_INT32 = sys.byteorder == "little" and array("i").itemsize == 4


class Segment(NamedTuple):
    """Consecutive rows of the four columns: per column the value end offsets from the
    segment's start (int32 LE, one per row), the digest lanes (int32 LE sizes, -1 for a
    null), the values' UTF-8 bytes and the validity bits (bit i set: row i not null)."""

    rows: int
    ends: tuple[bytes, ...]
    lanes: tuple[bytes, ...]
    data: tuple[bytes, ...]
    valid: tuple[int, ...]


def segment(columns: list[list[str | None]]) -> Segment | None:
    """The segment of `columns` (equal-length lists of exact str or None); None when
    a value is anything else or is not encodable (a lone surrogate)."""
    if not _NATIVE_INT32:
        return None
    rows = len(columns[0])
    ends, lanes, data, valid = [], [], [], []
    for column in columns:
        if len(column) != rows:
            return None
        if None not in column:  # every row set (`in` compares by identity first)
            if not {*map(type, column)} <= _STR:
                return None
            joined = "".join(column)
            bits = (1 << rows) - 1
        else:
            types = {*map(type, column)}
            if types == _NONE:  # every row null: a run of zero offsets
                ends.append(bytes(4 * rows))
                lanes.append(b"\xff" * (4 * rows))
                data.append(b"")
                valid.append(0)
                continue
            if not types <= _STR_OR_NONE:
                return None
            joined = "".join([value for value in column if value is not None])
            bits = int("".join("0" if value is None else "1" for value in reversed(column)), 2)
        try:
            encoded = joined.encode("utf-8")
        except UnicodeEncodeError:
            return None
        if len(encoded) >= 1 << 31:  # int32 offsets
            return None
        ascii_only = len(encoded) == len(joined)  # then characters are bytes
        if bits == (1 << rows) - 1:
            sizes = list(map(len, column)) if ascii_only else [len(v.encode()) for v in column]
            column_lanes = array("i", sizes).tobytes()
        else:
            if ascii_only:
                sizes = [0 if value is None else len(value) for value in column]
            else:
                sizes = [0 if value is None else len(value.encode()) for value in column]
            pairs = zip(column, sizes, strict=True)
            column_lanes = array("i", [-1 if v is None else size for v, size in pairs]).tobytes()
        ends.append(array("i", accumulate(sizes)).tobytes())
        lanes.append(column_lanes)
        data.append(encoded)
        valid.append(bits)
    return Segment(rows, tuple(ends), tuple(lanes), tuple(data), tuple(valid))


_STR = frozenset({str})
_NONE = frozenset({type(None)})
_STR_OR_NONE = _STR | _NONE


_ONES: dict[int, int] = {}


def _shifted(ends: bytes, rows: int, base: int) -> bytes:
    """int32 LE offsets `ends` plus `base` each: one big-integer addition (no lane can
    carry into the next while every offset stays below 2^31, checked by the caller, nor
    borrow from it when `base` is negative: each offset is at least -base)."""
    if not base:
        return ends
    ones = _ONES.get(rows)
    if ones is None:
        ones = _ONES[rows] = int.from_bytes(b"\x01\x00\x00\x00" * rows, "little")
    return (int.from_bytes(ends, "little") + base * ones).to_bytes(4 * rows, "little")


def concat_segments(first: Segment, second: Segment) -> Segment | None:
    """The segment of the rows of `first` then those of `second` (the same as `segment`
    of the joined lists); None when a column's bytes would not fit int32 offsets."""
    ends, data = [], []
    for c, head in enumerate(first.data):
        tail = second.data[c]
        if len(head) + len(tail) >= 1 << 31:
            return None
        ends.append(first.ends[c] + _shifted(second.ends[c], second.rows, len(head)))
        data.append(head + tail)
    shift = first.rows
    return Segment(
        shift + second.rows,
        tuple(ends),
        tuple(a + b for a, b in zip(first.lanes, second.lanes, strict=True)),
        tuple(data),
        tuple(a | b << shift for a, b in zip(first.valid, second.valid, strict=True)),
    )


def write_segments(
    parts: list[Segment], compression: str | None, write_with_pyarrow
) -> bytes | None:
    """The node file of the rows of `parts`, in order, with its rows digest, as pyarrow's
    writer would write it; None when this module cannot (the caller uses pyarrow)."""
    template = template_for(compression, write_with_pyarrow)
    if template is None:
        return None
    return _write_segments(parts, template, _compress_for(compression))


def _write_segments(
    parts: list[Segment], template: _Template, codec: _Codec | None
) -> bytes | None:
    rows = sum(part.rows for part in parts)
    digest = rows_digest_prefix(rows)
    columns: list[Column] = []
    for c in range(len(parts[0].data)):
        data = b"".join([part.data[c] for part in parts])
        if len(data) >= 1 << 31:  # int32 offsets: not a node this path writes
            return None
        digest.update(b"".join([part.lanes[c] for part in parts]))
        digest.update(data)
        offsets = [bytes(4)]
        bits, shift, base = 0, 0, 0
        for part in parts:
            offsets.append(_shifted(part.ends[c], part.rows, base))
            base += len(part.data[c])
            bits |= part.valid[c] << shift
            shift += part.rows
        offsets = b"".join(offsets)
        nulls = rows - bits.bit_count()
        bitmap = bits.to_bytes((rows + 7) // 8, "little") if nulls else b""
        columns.append((rows, nulls, [bitmap, offsets, data]))
    hexdigest = digest.hexdigest().encode("ascii")
    return _assemble_columns(columns, hexdigest, template, codec)


# -- the rows after the system rows, kept from one root to the next ------------------------
#
# A commit's root is the previous root's key table and buffer plus this commit's messages,
# after new system rows. `Body` holds those rows as they were last written (offsets
# already moved past the system rows), so the next root converts and shifts only its new
# messages instead of joining and shifting every part again (issue 13: commit CPU).


class Body(NamedTuple):
    """The rows after a node file's system rows, per column as written: the value end
    offsets counted from the column's start when the system rows' values took `bases`
    bytes (int32 LE, one per row), the digest lanes, the values' UTF-8 bytes and the
    validity bits (bit i: row i of the body is not null)."""

    rows: int
    bases: tuple[int, ...]
    ends: tuple[bytes, ...]
    lanes: tuple[bytes, ...]
    data: tuple[bytes, ...]
    valid: tuple[int, ...]


def body_of(part: Segment) -> Body:
    """The body of the rows of `part` (offsets as if no system row came before)."""
    return Body(part.rows, (0,) * len(part.data), part.ends, part.lanes, part.data, part.valid)


def write_with_body(
    system: Segment, body: Body, tail: Segment | None, compression: str | None, write_with_pyarrow
) -> tuple[bytes, Body] | None:
    """The node file of the rows of `system`, then `body`, then `tail` (None: none),
    with its rows digest, as pyarrow's writer would write it, and the body of the rows
    after the system rows (`body` then `tail`) for the next root; None when this module
    cannot (the caller uses pyarrow)."""
    template = template_for(compression, write_with_pyarrow)
    if template is None:
        return None
    n_sys = system.rows
    rows = n_sys + body.rows + (0 if tail is None else tail.rows)
    digest = rows_digest_prefix(rows)
    columns: list[Column] = []
    bases, ends, lanes, datas, valids = [], [], [], [], []
    for c, head in enumerate(system.data):
        base = len(head)
        body_ends = _shifted(body.ends[c], body.rows, base - body.bases[c])
        body_lanes, body_data, body_valid = body.lanes[c], body.data[c], body.valid[c]
        if tail is not None:
            body_ends += _shifted(tail.ends[c], tail.rows, base + len(body_data))
            body_lanes += tail.lanes[c]
            body_data += tail.data[c]
            body_valid |= tail.valid[c] << body.rows
        data = head + body_data
        if len(data) >= 1 << 31:  # int32 offsets: not a node this path writes
            return None
        digest.update(system.lanes[c] + body_lanes)
        digest.update(data)
        bits = system.valid[c] | body_valid << n_sys
        nulls = rows - bits.bit_count()
        bitmap = bits.to_bytes((rows + 7) // 8, "little") if nulls else b""
        columns.append((rows, nulls, [bitmap, _ZERO + system.ends[c] + body_ends, data]))
        bases.append(base)
        ends.append(body_ends)
        lanes.append(body_lanes)
        datas.append(body_data)
        valids.append(body_valid)
    hexdigest = digest.hexdigest().encode("ascii")
    data = _assemble_columns(columns, hexdigest, template, _compress_for(compression))
    kept = Body(rows - n_sys, tuple(bases), tuple(ends), tuple(lanes), tuple(datas), tuple(valids))
    return data, kept


_ZERO = bytes(4)
