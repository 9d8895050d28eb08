"""Regression (issue 10, item 3): directory symlinks at the hash prefixes (``0000`` ..
``1111``) made new node and definition files land outside the lakehouse root; fsck
reported them missing while reads followed them. The local store opens every path
component with O_NOFOLLOW: a link is an error naming it, never a way out."""

from __future__ import annotations

import os

import pytest

from trinityfs import Lakehouse, errors

# (the old code had no such error: there the tests fail on what they check, not on this)
SymlinkInRootError = getattr(errors, "SymlinkInRootError", errors.TrinityError)


def test_writes_never_land_outside_through_a_symlinked_prefix(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "lake"
    planted = []
    for i in range(16):
        prefix = format(i, "04b")
        if not (root / prefix).exists():
            os.symlink(outside, root / prefix)
            planted.append(prefix)
    assert planted
    with pytest.raises(SymlinkInRootError, match="symbolic link"):
        lake.create_namespace("ns")
    assert list(outside.iterdir()) == [], "nothing may be written outside the root"
    for prefix in planted:
        os.unlink(root / prefix)
    lake.create_namespace("ns")  # with the links gone the lakehouse works again
    assert lake.fsck().ok


def test_reads_never_follow_a_symlinked_file(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    location = lake.at().describe_table("ns", "t")  # noqa: F841 - it reads fine first
    secret = tmp_path / "secret.binpb"
    fresh = Lakehouse.open(str(tmp_path / "lake"))
    snap = fresh.engine.snapshot()
    definition = next(v for k, v in snap.items() if k.startswith("C==="))
    path = tmp_path / "lake" / definition
    secret.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(secret, path)
    with pytest.raises(SymlinkInRootError, match="symbolic link"):
        Lakehouse.open(str(tmp_path / "lake")).describe_table("ns", "t")
