"""Issue 12 divergence: an export named 2000-01-01 was the export through trinity:// but a
timestamp through the mount (ENOENT there, while ls /v listed it). The mount and
trinity:// now share the catalog's path model (trinityfs.catalog.paths over Lakehouse.resolve,
selectors() and move_namespace)."""

from __future__ import annotations

import os

import pytest

from tests.regression.fuse_mount import FUSE, mounted, sales_with_exports
from trinityfs.fs import TrinityFileSystem

pytestmark = FUSE


@pytest.fixture
def root(tmp_path) -> str:
    return sales_with_exports(str(tmp_path / "lake"))


def test_export_wins_over_a_time_in_both(root: str, tmp_path) -> None:
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    assert fs.ls("/v/2000-01-01/sales", detail=False) == ["/v/2000-01-01/sales/orders"]
    with mounted(root, tmp_path / "mnt") as m:
        assert "2000-01-01" in os.listdir(m.path / "v")
        assert os.listdir(m.path / "v" / "2000-01-01" / "sales") == ["orders"]
        # a time that is no export still reads the version current then (none: ENOENT)
        assert not (m.path / "v" / "2000-01-02").exists()
