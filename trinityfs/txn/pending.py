"""A transaction's pending writes, with their keys kept sorted between changes of the
key set, so that paging a prefix through a large transaction does not sort every
pending key again on every page."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import overload


class PendingWrites(dict[str, str | None]):
    """key -> definition location, or None for a delete (a plain dict to every caller).

    The sorted key list is rebuilt lazily, only after the key set changed: overwriting
    the value of a pending key (the common case in a long transaction editing one
    object) keeps it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._sorted: list[str] | None = None

    def __setitem__(self, key: str, value: str | None) -> None:
        if self._sorted is not None and key not in self:
            self._sorted = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._sorted = None

    def pop(self, key: str, *default: str | None) -> str | None:  # type: ignore[override]
        self._sorted = None
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, str | None]:
        self._sorted = None
        return super().popitem()

    def setdefault(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self._sorted = None
        return super().setdefault(key, default)

    def update(self, *args: Mapping[str, str | None] | Iterable, **kwargs: str | None) -> None:  # type: ignore[override]
        self._sorted = None
        super().update(*args, **kwargs)

    def __ior__(self, other: Mapping[str, str | None]) -> PendingWrites:  # type: ignore[override]
        self._sorted = None
        super().update(other)
        return self

    def clear(self) -> None:
        self._sorted = None
        super().clear()

    def in_prefix(self, prefix: str, after: str | None) -> PendingRange:
        """The pending (key, location) pairs whose key starts with `prefix` and is
        strictly after `after`, by key: a view that reads values only for the items
        asked for (a page of a scan asks for about a page of them)."""
        keys = self._sorted
        if keys is None:
            keys = self._sorted = sorted(self)
        lo = bisect_left(keys, prefix)
        if after is not None:
            lo = max(lo, bisect_right(keys, after))
        upper = _upper_bound(prefix)
        hi = len(keys) if upper is None else max(lo, bisect_left(keys, upper, lo))
        return PendingRange(self, keys, lo, hi)


class PendingRange(Sequence[tuple[str, str | None]]):
    """`(key, location)` items `lo` to `hi` of the sorted pending keys (read-only; valid
    until the transaction's key set changes)."""

    def __init__(self, pending: Mapping[str, str | None], keys: list[str], lo: int, hi: int):
        self._pending, self._keys, self._lo, self._hi = pending, keys, lo, hi

    def __len__(self) -> int:
        return self._hi - self._lo

    @overload
    def __getitem__(self, index: int) -> tuple[str, str | None]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, str | None]]: ...
    def __getitem__(self, index: int | slice):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            keys = self._keys[self._lo + start : self._lo + stop : step]
            return [(key, self._pending[key]) for key in keys]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        key = self._keys[self._lo + index]
        return key, self._pending[key]


def _upper_bound(prefix: str) -> str | None:
    """The smallest string above every string that starts with `prefix`, in Python's
    code point order (pending keys are compared here, never encoded)."""
    for at in range(len(prefix) - 1, -1, -1):
        if ord(prefix[at]) < 0x10FFFF:
            return prefix[:at] + chr(ord(prefix[at]) + 1)
    return None
