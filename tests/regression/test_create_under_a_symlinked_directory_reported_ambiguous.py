"""A file created once (an export's claim and root, a distributed transaction file)
below a directory that is a symbolic link was reported as an unknown outcome: the local
store refuses the link (SymlinkInRootError) before writing anything, but
`create_settled` took that refusal for a create that may have landed, read back five
times (each read refused again, each logged) and raised AmbiguousWriteError ("outcome
... unknown after 5 read-backs; retrying the same operation settles it"), which no retry
settles and which names neither the link nor the repair.

Now the refusal stands at once: SymlinkInRootError naming the linked directory, nothing
written (an earlier attempt of ours whose outcome was unknown is still settled by
reading back)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import SymlinkInRootError
from trinityfs.format.paths import transaction_location


def _lake(tmp_path: Path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    return lake


def _link_dir(tmp_path: Path, relative: str) -> Path:
    """Make lake/<relative> a link to a directory outside (moving what was there)."""
    inside = tmp_path / "lake" / relative
    outside = tmp_path / "outside"
    if inside.exists():
        inside.rename(outside)
    else:
        outside.mkdir()
    os.symlink(outside, inside)
    return outside


def test_a_full_export_under_a_symlinked_exports_directory(tmp_path, caplog) -> None:
    lake = _lake(tmp_path)
    outside = _link_dir(tmp_path, "_exports")
    before = lake.latest_version()
    with caplog.at_level(logging.WARNING), pytest.raises(SymlinkInRootError, match="_exports"):
        lake.export("full", mode="full")
    assert "read-back" not in caplog.text
    assert list(outside.iterdir()) == []
    assert Lakehouse.open(lake.url).latest_version() == before
    assert lake.exports() == []


def test_a_distributed_transaction_under_a_symlinked_directory(tmp_path, caplog) -> None:
    lake = _lake(tmp_path)
    first = transaction_location("t-linked").split("/")[0]
    outside = _link_dir(tmp_path, first)
    with caplog.at_level(logging.WARNING), pytest.raises(SymlinkInRootError, match=first):
        lake.begin_distributed(txn_id="t-linked")
    assert not any(outside.rglob("txn-*"))
    assert "read-back" not in caplog.text


def test_a_distributed_transaction_with_a_generated_id(tmp_path, caplog) -> None:
    """Every directory a generated id may land in is a link: before, "nothing was
    begun, begin again" (StorageError), which no retry could change."""
    lake = _lake(tmp_path)
    for top in (f"{i:04b}" for i in range(16)):
        inside = tmp_path / "lake" / top
        target = tmp_path / f"outside-{top}"
        if inside.exists():
            inside.rename(target)
        else:
            target.mkdir()
        os.symlink(target, inside)
    with caplog.at_level(logging.WARNING), pytest.raises(SymlinkInRootError):
        lake.begin_distributed()
    assert "read-back" not in caplog.text
