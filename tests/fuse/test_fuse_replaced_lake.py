"""A mounted lakehouse removed and created again at the same path: the mount answers
ENOENT and writes nothing into the new lakehouse (it remembers the old one), and a new
mount reads the new one. See tests/regression/test_replaced_lake_written_by_a_warm_writer.py."""

from __future__ import annotations

import errno
import os
import shutil
import time

import pytest
from fuse_helpers import FUSE, populate

from trinityfs import Lakehouse

pytestmark = FUSE
LATEST_TTL = 1.0  # the mount's default: a latest read probes again after this


def _roots(root: str) -> list[str]:
    return sorted(n for n in os.listdir(root) if n.startswith("_") and n.endswith(".arrow"))


def test_a_mount_of_a_replaced_lakehouse_answers_enoent_and_writes_nothing(
    tmp_path, make_mount
) -> None:
    root = str(tmp_path / "lake")
    populate(root)
    mount = make_mount(root)
    orders = mount.path / "sales" / "orders"
    content = orders.read_bytes()
    assert b"ICEBERG" in content

    shutil.rmtree(root)
    fresh = Lakehouse.create(root)
    fresh.create_namespace("sales")
    roots = _roots(root)
    time.sleep(LATEST_TTL + 0.2)

    with pytest.raises(FileNotFoundError):
        orders.read_bytes()
    with pytest.raises(OSError) as raised:
        (mount.path / "sales" / "copied").write_bytes(content)
    assert raised.value.errno in (errno.ENOENT, errno.EIO)
    assert _roots(root) == roots
    assert Lakehouse.open(root).list_tables("sales") == []
    assert "Traceback" not in mount.log_text()

    again = make_mount(root, name="again")
    assert sorted(os.listdir(again.path / "sales")) == []
