"""Verifiable file names and checksums (FORMAT.md section 1 lets writers do this).

Two mechanisms, chosen so that readers following FORMAT.md see nothing new:

* **Content-hash names.** The `<uuid4>` part of a node or definition file name (and of a
  lakehouse definition name) is an RFC 9562 version 8 UUID whose 122 free bits are
  60 bits of SHA-256 of the file's bytes, a 20-bit tag marking this scheme and 42 random
  bits. The random part keeps names unique even for identical content (a file that
  expiration may be sweeping is never reused). A reader that knows the tag verifies the
  bytes against the name; every other UUID (older trinityfs files, other writers) is
  opaque and is checked structurally only.
* **Row checksums in node files.** Root files have fixed names, so every node file
  carries the SHA-256 of its decoded rows in the Arrow schema's custom metadata
  (`trinityfs.rows-sha256`), invisible to readers that only read the four columns. A
  root's checksum covers its children's names, which cover their content: one verified
  root authenticates the whole version (a Merkle tree).

See docs/FORMAT-CHOICES.md ("Integrity") for the argument.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import uuid
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from trinityfs.errors import CorruptFileError

HASH_BITS = 60
TAG_BITS = 20
RANDOM_BITS = 42
# "trinityfs content hash, scheme 1": the 20 bits after the hash in the free bits.
SCHEME_TAG = 0x7F1A1
_DRAWS = 4  # random parts drawn per os.urandom call by content_uuids
ROWS_DIGEST_KEY = b"trinityfs.rows-sha256"
_ROWS_DIGEST_DOMAIN = b"trinityfs node rows v1\x00"

_UUID_IN_NAME = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(?:arrow|binpb)$"
)
_ARROW_MAGIC = b"ARROW1"
# Node files by the names FORMAT.md gives them: roots, optimized node paths, export roots.
_NODE_FILE = re.compile(
    r"(?:^|/)(?:_[01]{64}|[01]{4}/[01]{4}/[01]{4}/[01]{8}-node-[^/]*|_export_[^/]*)\.arrow$"
)


def _content_bits(data: bytes) -> int:
    digest = hashlib.sha256(data).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - HASH_BITS)


def _pack_int(free: int) -> int:
    """Lay 122 free bits into a UUID's 128 around its version (8) and variant (0b10) bits."""
    top48 = free >> 74
    mid12 = (free >> 62) & 0xFFF
    low62 = free & ((1 << 62) - 1)
    return (top48 << 80) | (0x8 << 76) | (mid12 << 64) | (0b10 << 62) | low62


def _unpack(value: uuid.UUID) -> int:
    n = value.int
    return ((n >> 80) << 74) | (((n >> 64) & 0xFFF) << 62) | (n & ((1 << 62) - 1))


def content_uuid(data: bytes) -> str:
    """A fresh UUID string naming a file with content `data` (hash + tag + random bits)."""
    return next(content_uuids(data))


def content_uuids(data: bytes) -> Iterator[str]:
    """Fresh UUID strings naming a file with content `data`, endlessly: the same hash and
    tag, new random bits each (the content is hashed once, however many are drawn)."""
    fixed = (_content_bits(data) << (TAG_BITS + RANDOM_BITS)) | (SCHEME_TAG << RANDOM_BITS)
    while True:
        pool = os.urandom(6 * _DRAWS)  # secrets.randbits(42) per name, in one call
        for at in range(0, 6 * _DRAWS, 6):
            free = fixed | int.from_bytes(pool[at : at + 6]) >> (48 - RANDOM_BITS)
            # str(uuid.UUID(int=...)) without the object (a create names a file every commit)
            text = f"{_pack_int(free):032x}"
            yield f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def name_hash(location: str) -> int | None:
    """The content hash a file name carries, or None when it carries none (legacy name)."""
    match = _UUID_IN_NAME.search(location)
    if match is None:
        return None
    value = uuid.UUID(match.group(1))
    if value.version != 8 or value.variant != uuid.RFC_4122:
        return None
    free = _unpack(value)
    if (free >> RANDOM_BITS) & ((1 << TAG_BITS) - 1) != SCHEME_TAG:
        return None
    return free >> (TAG_BITS + RANDOM_BITS)


def has_content_name(location: str) -> bool:
    """Whether the name of `location` lets a reader verify the file's bytes."""
    return name_hash(location) is not None


#: (location, bytes object) verified last: a read checks a node file's bytes before they
#: are cached and the decoder checks them again; the same immutable object under the
#: same name needs no second hash. Replaced whole (one slot, any thread).
_last_verified: tuple[str, bytes] = ("", b"")


def verify_named_content(location: str, data: bytes) -> bool:
    """Check `data` against the hash in the name: True if verified, False if the name has
    no hash (a legacy name), CorruptFileError naming the file if they disagree."""
    global _last_verified
    last = _last_verified
    if last[1] is data and last[0] == location and data:
        return True
    expected = name_hash(location)
    if expected is None:
        return False
    if not data:
        raise CorruptFileError(location, "the file is empty (0 bytes)")
    if _content_bits(data) != expected:
        raise CorruptFileError(
            location,
            f"content does not match the hash in its name ({len(data)} bytes read; "
            "truncated, bit-flipped or replaced)",
        )
    if type(data) is bytes:  # immutable: the same object keeps the same content
        _last_verified = (location, data)
    return True


def check_file_bytes(location: str, data: bytes) -> None:
    """Cheap checks before caching bytes of an immutable file: the name hash when there
    is one, otherwise a node file (by its FORMAT.md name) must be a complete Arrow file,
    beginning and ending with its magic, so a short read of one never passes."""
    if verify_named_content(location, data):
        return
    if _NODE_FILE.search(location) and (
        not data.startswith(_ARROW_MAGIC) or not data.endswith(_ARROW_MAGIC)
    ):
        raise CorruptFileError(
            location, f"not a complete Arrow IPC file ({len(data)} bytes; truncated?)"
        )


def rows_digest(columns: list[pa.Array]) -> str:
    """SHA-256 (hex) of the rows of a node file's string columns.

    Per column: the value lengths as little-endian int32 (-1 for null), then the value
    bytes. Computed from the Arrow buffers, so it costs one pass.
    """
    n_rows = len(columns[0]) if columns else 0
    h = rows_digest_prefix(n_rows)
    for column in columns:
        if not pa.types.is_string(column.type) or len(column) != n_rows:
            raise ValueError("rows_digest needs string columns of equal length")
    if not n_rows:
        return h.hexdigest()
    if n_rows <= _LANE_ROWS_MAX and _LITTLE_ENDIAN:
        all_lengths = None
    else:
        # The lengths of every column in two kernel calls (each call costs tens of us).
        lengths = pc.fill_null(pc.binary_length(pa.chunked_array(columns, type=pa.string())), -1)
        all_lengths = _array_bytes(lengths.combine_chunks(), 4)
    for i, column in enumerate(columns):
        validity, offsets, data = column.buffers()
        start = 4 * column.offset
        ends = memoryview(offsets)[start : start + 4 * (n_rows + 1)]  # n_rows + 1 offsets
        if all_lengths is None:
            h.update(_lane_lengths(validity, ends, column, n_rows))
        else:
            h.update(all_lengths[4 * n_rows * i : 4 * n_rows * (i + 1)])
        if data is not None:
            first = int.from_bytes(ends[:4], "little")
            last = int.from_bytes(ends[-4:], "little")
            h.update(memoryview(data)[first:last])
    return h.hexdigest()


def rows_digest_prefix(n_rows: int) -> hashlib._Hash:
    """The rows digest's hash after its domain and row count: update it with each
    column's lanes (int32 LE lengths, -1 for null) then its value bytes, in order."""
    h = hashlib.sha256(_ROWS_DIGEST_DOMAIN)
    h.update(n_rows.to_bytes(8, "little"))
    return h


def _array_bytes(values: pa.Array, width: int) -> memoryview:
    buffer = values.buffers()[1]
    start = values.offset * width
    return memoryview(buffer)[start : start + len(values) * width]


# Up to this many rows a column's lengths are computed with integer arithmetic on its
# buffers (below) instead of compute kernels, whose calls cost more than the work for
# the small nodes every commit encodes and every cold read verifies (a root, a leaf).
_LANE_ROWS_MAX = 4096
_LITTLE_ENDIAN = sys.byteorder == "little"
# byte b of an inverted validity bitmap -> 8 int32 lanes, all ones where a bit is set
_NULL_LANES = [
    b"".join(b"\xff\xff\xff\xff" if b >> j & 1 else bytes(4) for j in range(8)) for b in range(256)
]


def _lane_lengths(
    validity: pa.Buffer | None, ends: memoryview, column: pa.Array, n_rows: int
) -> bytes:
    """The value lengths of a string column (`ends`: its n_rows + 1 offsets, `validity`
    its validity buffer) as little-endian int32, -1 for a null: what binary_length +
    fill_null(-1) give. The offsets of a valid array never decrease
    (decode_node validates them first), so subtracting the offsets shifted by one row
    as two big integers subtracts lane by lane without a borrow crossing lanes; OR-ing
    all-ones lanes at the nulls then gives -1 whatever a null's offsets say."""
    lengths = int.from_bytes(ends[4:], "little") - int.from_bytes(ends[:-4], "little")
    if column.null_count:
        bits = 0 if validity is None else int.from_bytes(validity, "little") >> column.offset
        nulls = ~bits & ((1 << n_rows) - 1)
        lanes = b"".join(map(_NULL_LANES.__getitem__, nulls.to_bytes(-(-n_rows // 8), "little")))
        lengths |= int.from_bytes(lanes[: 4 * n_rows], "little")
    return lengths.to_bytes(4 * n_rows, "little")


def with_rows_digest(schema: pa.Schema, columns: list[pa.Array]) -> pa.Schema:
    """`schema` carrying the rows digest of `columns` in its custom metadata."""
    metadata = dict(schema.metadata or {})
    metadata[ROWS_DIGEST_KEY] = rows_digest(columns).encode("ascii")
    return schema.with_metadata(metadata)


def verify_rows_digest(schema: pa.Schema, columns: list[pa.Array], path: str) -> bool:
    """Check a node file's rows against its stored digest: True if verified, False if it
    carries none (written by another writer or an older trinityfs)."""
    metadata = schema.metadata or {}
    stored = metadata.get(ROWS_DIGEST_KEY)
    if stored is None:
        if any(key.startswith(b"trinityfs.") for key in metadata):
            raise CorruptFileError(path, "damaged trinityfs metadata (unknown checksum key)")
        return False
    if stored.decode("ascii", "replace") != rows_digest(columns):
        raise CorruptFileError(
            path, "rows do not match the checksum stored in the file (bit-flipped or altered)"
        )
    return True


# -- checksum trailers of mutable protobuf files ------------------------------------------
#
# Files with fixed names that are rewritten in place (a distributed transaction's
# `txn-<id>.binpb`) cannot carry a hash in their name. They end with one extra protobuf
# field, number CHECKSUM_FIELD (the highest allowed, used by no FORMAT.md message), holding
# the SHA-256 of every byte before it. A reader following FORMAT.md skips it as an unknown
# field; trinityfs verifies it.

CHECKSUM_FIELD = 2**29 - 1
_DIGEST_BYTES = 32
_TRAILER_DOMAIN = b"trinityfs checked protobuf v1\x00"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits, value = value & 0x7F, value >> 7
        out.append(bits | (0x80 if value else 0))
        if not value:
            return bytes(out)


_TRAILER_HEAD = _varint((CHECKSUM_FIELD << 3) | 2) + _varint(_DIGEST_BYTES)
TRAILER_BYTES = len(_TRAILER_HEAD) + _DIGEST_BYTES


def _trailer_digest(body: bytes) -> bytes:
    return hashlib.sha256(_TRAILER_DOMAIN + body).digest()


def add_checksum_trailer(body: bytes) -> bytes:
    """`body` (an encoded protobuf message) followed by its checksum field."""
    return body + _TRAILER_HEAD + _trailer_digest(body)


def split_checksum_trailer(location: str, data: bytes) -> tuple[bytes, bool]:
    """(message bytes, verified): the bytes before a checksum trailer that matches them,
    or all of `data` and False when there is no trailer (another writer's file; the
    caller checks it structurally). CorruptFileError naming the file on a mismatch."""
    head_at = len(data) - TRAILER_BYTES
    if head_at < 0 or data[head_at : head_at + len(_TRAILER_HEAD)] != _TRAILER_HEAD:
        return data, False
    body = data[:head_at]
    if data[-_DIGEST_BYTES:] != _trailer_digest(body):
        raise CorruptFileError(
            location,
            f"content does not match the checksum stored in the file ({len(data)} bytes; "
            "bit-flipped or altered)",
        )
    return body, True
