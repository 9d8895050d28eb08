"""Fixtures of the trinity:// filesystem tests: a lakehouse in a fresh directory and a
filesystem on it, optionally filled with a small sample catalog."""

from __future__ import annotations

import pytest
from fs_helpers import NO_FSYNC, make_fs

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

ORDERS = {"table_format": "ICEBERG", "table_type": "MANAGED", "properties": {"owner": "ops"}}
BIG_ORDERS = {"properties": {"sql": "select * from orders where total > 100"}}


@pytest.fixture
def root(tmp_path) -> str:
    """A new, empty lakehouse in a local directory (version 0)."""
    path = str(tmp_path / "lake")
    Lakehouse.create(path, storage_options=NO_FSYNC)
    return path


@pytest.fixture
def fs(root) -> TrinityFileSystem:
    return make_fs(root)


@pytest.fixture
def lake(fs) -> Lakehouse:
    """The filesystem's own Lakehouse (shares its storage counters)."""
    return fs.lake


@pytest.fixture
def sample(fs, lake) -> TrinityFileSystem:
    """Versions 1-4: namespace sales (owner=analytics), table sales.orders, view
    sales.big_orders, empty namespace staging."""
    lake.create_namespace("sales", {"owner": "analytics"})
    lake.create_table("sales", "orders", ORDERS)
    lake.create_view("sales", "big_orders", BIG_ORDERS)
    lake.create_namespace("staging")
    assert lake.latest_version() == 4
    return fs
