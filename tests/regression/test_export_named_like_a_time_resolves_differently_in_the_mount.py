"""Issue 12 divergence: an export named 2000-01-01 was the export through trinity:// but a
timestamp through the mount (ENOENT there, while ls /v listed it). The mount and
trinity:// now share the catalog's path model (trinityfs.catalog.paths over Lakehouse.resolve,
selectors() and move_namespace)."""

from __future__ import annotations

import os
import sys

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuse"))
from fuse_helpers import FUSE, mounted

pytestmark = FUSE


@pytest.fixture
def root(tmp_path) -> str:
    path = str(tmp_path / "lake")
    lake = Lakehouse.create(path)
    lake.create_namespace("sales", {"tier": "gold"})  # 1
    lake.create_table("sales", "orders", {"table_format": "ICEBERG"})  # 2
    lake.create_view("sales", "big", {})  # 3
    lake.export("2000-01-01", version=2)  # 4
    lake.export("3", version=2)  # 5
    return path


def test_export_wins_over_a_time_in_both(root: str, tmp_path) -> None:
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    assert fs.ls("/v/2000-01-01/sales", detail=False) == ["/v/2000-01-01/sales/orders"]
    with mounted(root, tmp_path / "mnt") as m:
        assert "2000-01-01" in os.listdir(m.path / "v")
        assert os.listdir(m.path / "v" / "2000-01-01" / "sales") == ["orders"]
        # a time that is no export still reads the version current then (none: ENOENT)
        assert not (m.path / "v" / "2000-01-02").exists()
