"""Bounded LRU cache of immutable file contents, sized in bytes (a `trinityfs.lru.LRU`
weighed by length)."""

from __future__ import annotations

from trinityfs.lru import LRU


class ByteLRUCache:
    """Maps a location to its bytes; evicts least recently used entries past `max_bytes`.

    An entry larger than the whole budget is not cached. ``max_bytes=0`` disables caching.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("cache size must be >= 0")
        self.max_bytes = max_bytes
        self._entries: LRU[str, bytes] = LRU(max_bytes, weigh=len)

    def get(self, key: str) -> bytes | None:
        return self._entries.get(key)

    def put(self, key: str, data: bytes) -> None:
        """Keep `data` (an entry over the budget is dropped, an older copy with it)."""
        self._entries.put(key, data)

    def discard(self, key: str) -> None:
        self._entries.pop(key)

    def clear(self) -> None:
        self._entries.clear()

    @property
    def current_bytes(self) -> int:
        """Bytes held now (always <= max_bytes)."""
        return self._entries.weight

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries
