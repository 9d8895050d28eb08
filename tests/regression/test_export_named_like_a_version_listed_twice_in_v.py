"""Issue 12 divergence: an export named 3 was listed twice in the mount's /v. The mount and
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


def test_v_lists_each_name_once_and_the_same_in_both(root: str, tmp_path) -> None:
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    from_fs = [p.rsplit("/", 1)[1] for p in fs.ls("/v", detail=False)]
    with mounted(root, tmp_path / "mnt") as m:
        listed = os.listdir(m.path / "v")
        assert len(listed) == len(set(listed))
        assert sorted(listed) == sorted(from_fs)
        assert sorted(os.listdir(m.path / "v" / "3" / "sales")) == ["big", "orders"]
        # the export named 3 is listed, spelled so that it reads the export
        assert "export:3" in listed
        assert os.listdir(m.path / "v" / "export:3" / "sales") == ["orders"]
    assert fs.ls("/v/export:3/sales", detail=False) == ["/v/export:3/sales/orders"]
