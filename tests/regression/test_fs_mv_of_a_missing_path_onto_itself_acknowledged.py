"""Regression: `fs.mv(p, p)` returned success for a path that does not exist (and for a
path inside a read-only old version), an acknowledgement of something that did not
happen; rename(2) and `mv` say ENOENT (and EROFS). Found 2026-11-24 (helper
adversary); fails on e0c4099. Moving an existing path onto itself stays a no-op
without a commit."""

from __future__ import annotations

import errno

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}


@pytest.fixture
def fs(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {})
    return TrinityFileSystem(
        root=str(tmp_path / "lake"), storage_options=NO_FSYNC, skip_instance_cache=True
    )


@pytest.mark.parametrize("path", ["ns/missing", "/ns/missing", "nons", "nons/t"])
def test_mv_of_a_missing_path_onto_itself_is_enoent(fs, path):
    with pytest.raises(FileNotFoundError):
        fs.mv(path, path)


def test_mv_inside_an_old_version_onto_itself_is_erofs(fs):
    with pytest.raises(PermissionError) as caught:
        fs.mv("/v/2/ns/t", "/v/2/ns/t")
    assert caught.value.errno == errno.EROFS


@pytest.mark.parametrize("path", ["ns/t", "ns"])
def test_mv_of_an_existing_path_onto_itself_commits_nothing(fs, path):
    before = fs.lake.latest_version()
    fs.mv(path, path)
    assert fs.lake.latest_version() == before
    assert fs.exists("ns/t")
