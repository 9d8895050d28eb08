"""The storage layer: a lakehouse root on local disk, memory:// or S3, via fsspec.

`Storage` gives validated relative locations, atomic create-if-absent, a bounded cache of
immutable files and request counters (`StorageStats`).
"""

from .base import FileEntry
from .core import DEFAULT_CACHE_BYTES, Storage, open_storage
from .stats import StorageStats

__all__ = ["DEFAULT_CACHE_BYTES", "FileEntry", "Storage", "StorageStats", "open_storage"]
