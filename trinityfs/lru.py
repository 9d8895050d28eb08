"""A small thread-safe least-recently-used map: the one LRU of trinityfs.

Caches of immutable things (decoded roots, rendered definitions, snapshots) keep at most
`capacity` entries, or at most `capacity` units of weight when a `weigh` function is
given (e.g. entries of a cached listing), dropping the least recently used first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded map; `get` refreshes an entry, `put` evicts the least recently used."""

    def __init__(self, capacity: int, weigh: Callable[[V], int] | None = None):
        if capacity < 0:
            raise ValueError(f"an LRU capacity is a count >= 0, not {capacity}")
        self.capacity = capacity
        self._weigh = weigh
        self._data: OrderedDict[K, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def _cost(self, value: V) -> int:
        return 1 if self._weigh is None else self._weigh(value)

    def get(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            try:
                value = self._data[key]
            except KeyError:
                return default
            self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep `value` (unless it alone weighs more than the capacity)."""
        cost = self._cost(value)
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._weight -= self._cost(old)
            if cost > self.capacity:
                return
            self._data[key] = value
            self._weight += cost
            while self._weight > self.capacity and self._data:
                _, dropped = self._data.popitem(last=False)
                self._weight -= self._cost(dropped)

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The cached value, or `load()` kept and returned (load runs outside the lock)."""
        sentinel = _MISSING
        hit = self.get(key, sentinel)  # type: ignore[arg-type]
        if hit is not sentinel:
            return hit  # type: ignore[return-value]
        value = load()
        self.put(key, value)
        return value

    def pop(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            if key not in self._data:
                return default
            value = self._data.pop(key)
            self._weight -= self._cost(value)
            return value

    def discard_if(self, predicate: Callable[[K], bool]) -> int:
        """Drop every entry whose key matches; returns how many were dropped."""
        with self._lock:
            keys = [k for k in self._data if predicate(k)]
            for k in keys:
                self._weight -= self._cost(self._data.pop(k))
            return len(keys)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._weight = 0

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._data)

    @property
    def weight(self) -> int:
        return self._weight

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


_MISSING = object()

__all__ = ["LRU"]
