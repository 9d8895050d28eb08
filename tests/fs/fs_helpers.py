"""Helpers shared by the trinity:// filesystem tests."""

from __future__ import annotations

from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}


def make_fs(root: str, **kwargs) -> TrinityFileSystem:
    """A filesystem instance of its own (no instance cache shared between tests)."""
    return TrinityFileSystem(
        root=root, storage_options=NO_FSYNC, skip_instance_cache=True, **kwargs
    )
