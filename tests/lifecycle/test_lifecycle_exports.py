"""Snapshot exports: minimal, partial and full; reading by name; dropping."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import NO_FSYNC, SMALL_TREE, files_under, make_history, read_fully

from trinityfs import Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    InvalidNameError,
    ReadOnlyError,
    VersionNotFoundError,
)
from trinityfs.format.node_decode import decode_node
from trinityfs.format.paths import root_node_file
from trinityfs.lifecycle.exports import SOURCE_VERSION_PROPERTY
from trinityfs.storage import Storage


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 60, tables=40)
    lake.create_view("ns", "v1", {"properties": {"sql": "select 1"}})
    return lake


def _root_children(storage: Storage, location: str) -> list[str]:
    return decode_node(storage.read(location), None, location).children or []


def test_minimal_export_pins_a_version(lake) -> None:
    version = lake.latest_version()
    before = read_fully(lake)
    info = lake.export("monday")
    assert info.location == "_export_monday.arrow" and info.version == version
    assert info.mode == "minimal" and not info.standalone and info.files_written == 1
    # the root, byte for byte
    root = lake.storage.read(root_node_file(version))
    assert lake.storage.read(info.location) == root
    # recorded in a new LakehouseDef, committed as a version of its own
    assert lake.latest_version() == version + 1
    assert lake.lakehouse_def().exported_snapshots["monday"] == "_export_monday.arrow"
    make_history(lake, 30, tables=50)
    lake.drop_table("ns", "t1")
    assert read_fully(lake, export="monday") == before
    view = lake.at(export="monday")
    assert view.version == version
    assert view.describe_table("ns", "t1").properties
    with pytest.raises(ReadOnlyError):
        view.create_table("ns", "nope")
    [listed] = lake.exports()
    assert (listed.name, listed.version, listed.standalone) == ("monday", version, False)


@pytest.mark.parametrize("depth", [1, 2])
def test_partial_export_copies_upper_levels(lake, depth) -> None:
    version = lake.latest_version()
    stats = lake.check(version)
    assert stats.depth >= 2, "the history must build a tree deeper than the export"
    before = read_fully(lake)
    info = lake.export(f"p{depth}", mode="partial", depth=depth)
    storage = lake.storage
    original = _root_children(storage, root_node_file(version))
    copied = _root_children(storage, info.location)
    assert len(copied) == len(original)
    # every internal child was copied under a new name; leaves are never copied
    assert not set(copied) & set(original)
    assert all("node-" in loc for loc in copied)
    if depth == 1 and stats.depth >= 2:
        grand_original = [g for c in original for g in _root_children(storage, c)]
        grand_copied = [g for c in copied for g in _root_children(storage, c)]
        assert grand_copied == grand_original  # deeper pointers are kept
    make_history(lake, 40, tables=60)
    assert read_fully(lake, export=f"p{depth}") == before
    assert lake.at(export=f"p{depth}").version == version


def test_partial_depth_zero_is_minimal_and_bad_arguments(lake) -> None:
    info = lake.export("p0", mode="partial", depth=0)
    assert lake.storage.read(info.location) == lake.storage.read(root_node_file(info.version))
    with pytest.raises(InvalidArgumentError, match="mode"):
        lake.export("x", mode="everything")
    with pytest.raises(InvalidArgumentError, match="depth"):
        lake.export("x", mode="minimal", depth=2)
    with pytest.raises(InvalidArgumentError, match="depth"):
        lake.export("x", mode="partial", depth=-1)
    with pytest.raises(InvalidNameError):
        lake.export("a/b")
    with pytest.raises(AlreadyExistsError):
        lake.export("p0", mode="full")


def test_full_export_is_a_standalone_lakehouse(lake, tmp_path) -> None:
    version = lake.latest_version()
    before = read_fully(lake)
    lake.export("keepme")  # another export, which the standalone copy must not claim
    reports = []
    info = lake.export("friday", version=version, mode="full", progress=reports.append)
    assert info.standalone and info.version == version
    assert info.location == f"_exports/friday/{root_node_file(version)}"
    # progress: monotonic, ends with a complete "done" report
    done = [r.files_done for r in reports]
    assert done == sorted(done) and reports[-1].phase == "done"
    assert reports[-1].files_done == reports[-1].files_total == info.files_written
    assert reports[-1].bytes_done == info.bytes_written > 0
    # every file reachable from the version, at the same relative path
    export_dir = os.path.join(lake.storage.url[len("file://") :], "_exports", "friday")
    exported = files_under(export_dir)
    main = files_under(lake.storage.url[len("file://") :])
    for rel, size in exported.items():
        if rel.startswith("_") or rel.endswith(".txt"):
            continue  # root, its lakehouse definition, markers
        assert main[rel] == size
    make_history(lake, 30, tables=50)
    assert read_fully(lake, export="friday") == before

    # opens on its own, in place ...
    in_place = Lakehouse.open(export_dir)
    assert in_place.latest_version() == version == in_place.oldest_version()
    assert read_fully(in_place) == before
    ldef = in_place.lakehouse_def()
    assert not ldef.exported_snapshots and ldef.properties[SOURCE_VERSION_PROPERTY] == str(version)
    assert in_place.fsck().ok
    # ... and after being copied somewhere else entirely
    elsewhere = str(tmp_path / "elsewhere" / uuid.uuid4().hex)
    shutil.copytree(export_dir, elsewhere)
    moved = Lakehouse.open(elsewhere)
    assert read_fully(moved) == before
    assert moved.fsck().ok
    # it is a lakehouse: it takes commits of its own without touching the source
    moved.create_table("ns", "only_here")
    assert "only_here" in moved.list_tables("ns")
    assert "only_here" not in lake.list_tables("ns")
    assert read_fully(in_place) == before


def test_full_export_to_another_store(tmp_path) -> None:
    """A full export on memory:// copied file by file into another memory:// root."""
    lake = Lakehouse.create(f"memory://src-{uuid.uuid4().hex}", **SMALL_TREE)
    make_history(lake, 25, tables=20)
    before = read_fully(lake)
    lake.export("snap", mode="full")
    source = lake.storage.child("_exports/snap")
    target = Storage(f"memory://dst-{uuid.uuid4().hex}")
    for entry in source.list(""):
        target.write(entry.location, source.read(entry.location))
    copy = Lakehouse.open(target.url)
    assert read_fully(copy) == before
    assert copy.fsck().ok


def test_drop_export(lake) -> None:
    lake.export("m")
    lake.export("p", mode="partial", depth=1)
    lake.export("f", mode="full")
    root = lake.storage.url[len("file://") :]
    assert os.path.isdir(os.path.join(root, "_exports", "f"))
    dropped = lake.drop_export("f")
    assert dropped.bytes_removed > 0 and not dropped.left
    assert files_under(os.path.join(root, "_exports", "f")) == {}
    dropped = lake.drop_export("m")
    assert [f.location for f in dropped.removed] == ["_export_m.arrow"]
    assert not lake.storage.exists("_export_m.arrow")
    assert [e.name for e in lake.exports()] == ["p"]
    for name in ("m", "f"):
        with pytest.raises(VersionNotFoundError):
            lake.at(export=name)
        with pytest.raises(VersionNotFoundError):
            lake.drop_export(name)
    # the name is free again
    lake.export("m", mode="full")
    assert lake.at(export="m").list_tables("ns")


def test_leftovers_of_a_crashed_export_block_the_name_until_dropped(lake, monkeypatch) -> None:
    # a full export that died after claiming its directory, before its record
    lake.storage.write("_exports/crashed/_oldest_version.txt", b"3")
    with pytest.raises(AlreadyExistsError, match="drop_export"):
        lake.export("crashed", mode="full")
    # no record and a file younger than the commit window: it may be an export being
    # written by another process, so it is spared (docs/LIFECYCLE.md, "Exports")
    dropped = lake.drop_export("crashed")
    assert not dropped.removed and dropped.spared and "may still be being written" in dropped.note
    assert lake.storage.exists("_exports/crashed/_oldest_version.txt")
    # once older than the commit window plus margin it is a crashed export's: cleaned
    from trinityfs.lifecycle import export_drop

    real = export_drop.now_millis
    monkeypatch.setattr(export_drop, "now_millis", lambda: real() + 151_000)
    dropped = lake.drop_export("crashed")
    assert dropped.recorded_location is None and dropped.removed and not dropped.spared
    monkeypatch.undo()
    lake.export("crashed", mode="full")
    assert lake.at(export="crashed").list_tables("ns")


def test_export_of_an_expired_version_is_refused(lake) -> None:
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=2, grace_millis=0)
    with pytest.raises(VersionNotFoundError, match="expired"):
        lake.export("old", version=1)
    with pytest.raises(InvalidArgumentError):
        lake.at(3, export="whatever")


@pytest.mark.s3
def test_on_s3_full_export_copied_to_another_bucket(s3_bucket, s3_storage_options) -> None:
    import boto3

    url = f"s3://{s3_bucket}/{uuid.uuid4().hex}/lake"
    lake = Lakehouse.create(url, storage_options=s3_storage_options, **SMALL_TREE)
    make_history(lake, 15, tables=10)
    before = read_fully(lake)
    lake.export("m")
    lake.export("f", mode="full")
    make_history(lake, 5, tables=12)
    other = f"other-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", **s3_storage_options["client_kwargs"]).create_bucket(Bucket=other)
    source = lake.storage.child("_exports/f")
    target = Storage(f"s3://{other}/copy", s3_storage_options)
    for entry in source.list(""):
        target.write(entry.location, source.read(entry.location))
    copy = Lakehouse.open(target.url, storage_options=s3_storage_options)
    assert read_fully(copy) == before
    assert copy.fsck().ok
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert report.roots_removed > 0 and not report.spared_young
    assert read_fully(lake, export="m") == before == read_fully(lake, export="f")
    assert lake.fsck().ok


def test_export_of_a_version_expired_while_exporting(lake, monkeypatch) -> None:
    """Expiration runs after the export copied the root but before its record landed:
    the export must not survive pointing at swept nodes."""
    from trinityfs.lifecycle import exports

    record = exports._record

    def expire_first(engine, name, location):
        with expiring_later():
            lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
        record(engine, name, location)

    monkeypatch.setattr(exports, "_record", expire_first)
    with pytest.raises(VersionNotFoundError, match="expired while"):
        lake.export("racing", version=5)
    assert "racing" not in [e.name for e in lake.exports()]
    assert lake.fsck().ok
