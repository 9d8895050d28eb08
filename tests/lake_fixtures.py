"""Fixtures that make lakehouses for the catalog tests (local directory by default)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trinityfs import Lakehouse

# Small trees so that every test exercises flushes, splits and merges.
SMALL_TREE = {
    "order": 4,
    "namespace_name_max_size_bytes": 16,
    "table_name_max_size_bytes": 16,
    "view_name_max_size_bytes": 16,
    "node_file_max_size_bytes": 4 * (16 + 16 + 204) + 600,
}


@pytest.fixture
def make_lake(tmp_path) -> Callable[..., Lakehouse]:
    """Create a lakehouse in a fresh local directory (or memory:// with memory=True)."""

    def make(memory: bool = False, **options) -> Lakehouse:
        url = f"memory://lake-{uuid.uuid4().hex}" if memory else str(tmp_path / uuid.uuid4().hex)
        return Lakehouse.create(url, **options)

    return make


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.s3)])
def where(request, tmp_path) -> tuple[str, dict[str, Any]]:
    """(url, storage options) for a new lakehouse, once on local disk (no fsync) and once
    on S3 (the moto server; marked s3)."""
    if request.param == "local":
        return str(tmp_path / "lake"), {"fsync": False}
    options = request.getfixturevalue("s3_storage_options")
    bucket = request.getfixturevalue("s3_bucket")
    return f"s3://{bucket}/lake-{uuid.uuid4().hex}", dict(options)


@pytest.fixture
def lake(make_lake) -> Lakehouse:
    """A lakehouse with the default LakehouseDef in a fresh local directory."""
    return make_lake()


@pytest.fixture
def small_lake(make_lake) -> Lakehouse:
    """A lakehouse whose tiny nodes split, merge and flush after a few commits."""
    return make_lake(**SMALL_TREE)


def flip(path: Path) -> None:
    """Flip one bit in the middle of a file (damage that only a checksum notices)."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x04
    path.write_bytes(bytes(data))
