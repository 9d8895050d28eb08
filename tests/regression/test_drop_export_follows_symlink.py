"""Regression (issue 10, item 3): a symlink ``_exports/e1 -> /another/lakehouse`` made
``trinityfs drop-export e1`` delete all of the other lakehouse's files. Lifecycle deletes
only files it can prove belong to this lakehouse; the local store never follows a link
inside the root."""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import TrinityError


def _files(path) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, n), path)
        for d, _dirs, names in os.walk(path)
        for n in names
    }


def test_drop_export_leaves_a_symlinked_target_alone(tmp_path) -> None:
    other = Lakehouse.create(str(tmp_path / "other"), storage_options={"fsync": False})
    other.create_namespace("precious")
    other.create_table("precious", "t")
    before = _files(tmp_path / "other")
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    os.makedirs(tmp_path / "lake" / "_exports")
    os.symlink(tmp_path / "other", tmp_path / "lake" / "_exports" / "e1")
    with pytest.raises(TrinityError, match="_exports/e1"):
        lake.drop_export("e1")
    assert _files(tmp_path / "other") == before
    assert Lakehouse.open(str(tmp_path / "other")).list_tables("precious") == ["t"]


def test_expire_and_fsck_leave_a_symlinked_export_alone(tmp_path) -> None:
    from expire_clock import expiring_later

    other = Lakehouse.create(str(tmp_path / "other"), storage_options={"fsync": False})
    other.create_namespace("precious")
    before = _files(tmp_path / "other")
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    os.makedirs(tmp_path / "lake" / "_exports")
    os.symlink(tmp_path / "other", tmp_path / "lake" / "_exports" / "e1")
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    lake.fsck()
    assert _files(tmp_path / "other") == before
