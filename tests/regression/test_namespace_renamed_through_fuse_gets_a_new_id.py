"""Issue 12 divergence: a namespace renamed through the FUSE mount got a new id (fs.mv kept
it). The mount and trinity:// now share the catalog's path model (trinityfs.catalog.paths over
Lakehouse.resolve, selectors() and move_namespace)."""

from __future__ import annotations

import os

import pytest

from tests.regression.fuse_mount import FUSE, mounted, sales_with_exports
from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

pytestmark = FUSE


@pytest.fixture
def root(tmp_path) -> str:
    return sales_with_exports(str(tmp_path / "lake"))


def test_mount_rename_keeps_the_namespace_id_like_fs_mv(root: str, tmp_path) -> None:
    before = Lakehouse.open(root).snapshot()
    ns_id = before.describe_namespace("sales").id
    table_id = before.describe("table", "sales", "orders").id
    with mounted(root, tmp_path / "mnt") as m:
        os.rename(m.path / "sales", m.path / "sales2")
    after = Lakehouse.open(root).snapshot()
    assert after.describe_namespace("sales2").id == ns_id
    assert dict(after.describe_namespace("sales2").properties) == {"tier": "gold"}
    assert after.describe("table", "sales2", "orders").id == table_id
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    fs.mv("/sales2", "/sales3")
    assert fs.info("/sales3")["id"] == ns_id
