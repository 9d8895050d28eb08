"""A committed node's write buffer kept as Arrow columns (a bulk load's root).

A bulk load leaves its messages (a million, say) in the root it commits, as FORMAT.md
asks. Decoding them into a dict costs about 0.9 KB of Python objects per message; a
`ColumnBuffer` keeps the verified Arrow arrays instead, sorted by key, and answers the
read-only mapping operations from them: a lookup is a binary search, a range and a full
pass convert one slice at a time. The next commit streams it into the bottom-up builder
(`TreeWriter`), so no step holds a Python object per message.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from trinityfs.tree.budget import ROW_OVERHEAD_BYTES, Message, MessageBuffer

#: messages converted to Python at a time by a full pass
SLICE = 1024
#: every SAMPLE-th key is kept as Python bytes, so a lookup bisects in C first
SAMPLE = 64


def _utf8(key: str) -> bytes:
    """`key` as UTF-8, a lone surrogate (never in a stored key) as the 3 bytes it would
    take: total on any str, and byte order stays code point order (U+D7FF < U+D800-DFFF
    < U+E000), so such a key is found nowhere and bounds a range where it sorts."""
    return key.encode("utf-8", "surrogatepass")


class _KeyView:
    """The sorted key column seen as a sequence of UTF-8 `bytes`, for `bisect`.

    Read straight from the column's offsets and data buffers: converting an Arrow scalar
    per probe cost ~3 us, most of a warm lookup in a root a bulk load left. UTF-8 byte
    order is code point order, so a search for `_utf8(key)` lands where a search for
    `key` among the str keys would.
    """

    __slots__ = ("_data", "_offsets", "_sample")

    def __init__(self, keys: pa.Array):
        if keys.null_count:
            raise ValueError("a key column has no nulls")  # from_columns' input is verified
        width = {pa.string(): "i", pa.large_string(): "q"}.get(keys.type)
        if width is None:
            keys = keys.cast(pa.large_string())
            width = "q"
        _validity, offsets, data = keys.buffers()
        self._offsets = memoryview(offsets).cast(width)[keys.offset : keys.offset + len(keys) + 1]
        self._data = memoryview(b"" if data is None else data)
        self._sample = [self[i] for i in range(0, len(self), SAMPLE)]

    def find(self, key: bytes, lo: int = 0) -> int:
        """bisect_left(self, key, lo), narrowed by the sample first (~6 probes in Python
        instead of ~20 for a million keys)."""
        j = bisect_left(self._sample, key, lo // SAMPLE)
        start = max(lo, (j - 1) * SAMPLE)
        return bisect_left(self, key, start, min(len(self), j * SAMPLE))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i: int) -> bytes:
        return self._data[self._offsets[i] : self._offsets[i + 1]].tobytes()


class ColumnBuffer(Mapping[str, Message]):
    """Immutable key -> (value or None, version) over Arrow arrays with strictly
    ascending keys. Build it with `from_columns`, which refuses other orders."""

    __slots__ = ("_keys", "_values", "_versions", "_view", "nbytes")

    def __init__(self, keys: pa.Array, values: pa.Array, versions: pa.Array, nbytes: int):
        self._keys, self._values, self._versions = keys, values, versions
        self._view = _KeyView(keys)
        self.nbytes = nbytes

    @classmethod
    def from_columns(
        cls, keys: pa.Array, values: pa.Array, versions: pa.Array
    ) -> ColumnBuffer | None:
        """The buffer, or None when the keys are not strictly ascending (a root written
        by several commits is ordered by (version, key): the caller decodes it)."""
        n = len(keys)
        if n > 1 and not pc.all(pc.less(keys.slice(0, n - 1), keys.slice(1))).as_py():
            return None
        # FORMAT-CHOICES' estimate, summed in Arrow: UTF-8 bytes of key and value, the
        # decimal digits of the version, the row overhead.
        digits = pc.binary_length(pc.cast(versions, pa.string()))
        nbytes = sum(
            int(pc.sum(column).as_py() or 0)
            for column in (pc.binary_length(keys), pc.binary_length(values), digits)
        )
        return cls(keys, values, versions, nbytes + n * ROW_OVERHEAD_BYTES)

    # -- Mapping ----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._keys)

    def _find(self, key: str) -> int:
        encoded = _utf8(key)
        i = self._view.find(encoded)
        return i if i < len(self._keys) and self._view[i] == encoded else -1

    def __getitem__(self, key: str) -> Message:
        i = self._find(key) if isinstance(key, str) else -1
        if i < 0:
            raise KeyError(key)
        return self._values[i].as_py(), self._versions[i].as_py()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) >= 0

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self._keys), SLICE):
            yield from self._keys.slice(start, SLICE).to_pylist()

    def items(self) -> Iterator[tuple[str, Message]]:  # type: ignore[override]
        for key, value, version in self.rows():
            yield key, (value, version)

    def values(self) -> Iterator[Message]:  # type: ignore[override]
        for _key, value, version in self.rows():
            yield value, version

    # -- streaming ----------------------------------------------------------------------

    def rows(
        self, start: int = 0, stop: int | None = None
    ) -> Iterator[tuple[str, str | None, int]]:
        """(key, value or None, version) by key, converted a slice at a time."""
        stop = len(self._keys) if stop is None else stop
        for lo in range(start, stop, SLICE):
            n = min(SLICE, stop - lo)
            yield from zip(
                self._keys.slice(lo, n).to_pylist(),
                self._values.slice(lo, n).to_pylist(),
                self._versions.slice(lo, n).to_pylist(),
                strict=True,
            )

    def span(self) -> list[str]:
        """The first and the last key (keys are strictly ascending), [] when empty."""
        if not len(self._keys):
            return []
        return [self._keys[0].as_py(), self._keys[-1].as_py()]

    def between(self, lo: str, hi: str | None) -> list[tuple[str, str | None]]:
        """(key, value or None) with lo <= key < hi (hi None: unbounded), by key."""
        start = self._view.find(_utf8(lo))
        stop = len(self._keys) if hi is None else self._view.find(_utf8(hi), start)
        return [(key, value) for key, value, _version in self.rows(start, stop)]

    def copy(self) -> MessageBuffer:
        """A mutable copy (one Python object per message: the writer avoids it)."""
        return MessageBuffer(self.items())
