"""Helpers of the tests of a lakehouse removed or created again while a handle is open
(tests/regression/test_lake_replaced_*.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from trinityfs.catalog import Lakehouse

LOCAL = {"fsync": False}


def lake_with(url: str, versions: int, prefix: str = "t", **options) -> Lakehouse:
    """A new lakehouse at `url` with exactly `versions` versions (tables `prefix`N)."""
    lake = Lakehouse.create(url, **options)
    lake.create_namespace("ns")
    for i in range(versions - 1):
        lake.create_table("ns", f"{prefix}{i}")
    assert lake.latest_version() == versions
    return lake


def empty_in_place(directory: Path) -> None:
    """Remove everything inside `directory`, keeping the directory itself (its inode)."""
    for entry in directory.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
