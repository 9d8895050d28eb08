"""Counters of real storage requests, for benchmarks and tests.

Every kind counts requests sent to the store; ``read_cached_hit`` counts reads served
by the immutable-file cache (no request) and is left out of ``requests``.
"""

from __future__ import annotations

import threading

KINDS = (
    "read",
    "read_cached_hit",
    "write",
    "create",
    "exists",
    "size",
    "list",
    "delete",
    "probe",
)


class StorageStats:
    """Thread-safe request and byte counters of one `Storage`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(KINDS, 0)
        self._bytes_read = 0
        self._bytes_written = 0

    def record(self, kind: str, *, bytes_read: int = 0, bytes_written: int = 0) -> None:
        """Count one request of `kind` and the bytes it moved."""
        with self._lock:
            self._counts[kind] += 1
            self._bytes_read += bytes_read
            self._bytes_written += bytes_written

    def add_bytes(self, *, bytes_read: int = 0, bytes_written: int = 0) -> None:
        """Count bytes of a request already recorded (known only once it returned)."""
        with self._lock:
            self._bytes_read += bytes_read
            self._bytes_written += bytes_written

    def snapshot(self) -> dict[str, int]:
        """Counts by kind, ``requests`` (all but cache hits), ``bytes_read``, ``bytes_written``."""
        with self._lock:
            out = dict(self._counts)
            out["requests"] = sum(n for k, n in self._counts.items() if k != "read_cached_hit")
            out["bytes_read"] = self._bytes_read
            out["bytes_written"] = self._bytes_written
        return out

    def reset(self) -> None:
        """Zero every counter."""
        with self._lock:
            self._counts = dict.fromkeys(KINDS, 0)
            self._bytes_read = 0
            self._bytes_written = 0

    def __repr__(self) -> str:
        return f"StorageStats({self.snapshot()})"
