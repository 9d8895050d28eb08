"""The root copy of a minimal or partial export is `_export_<name>.arrow` (FORMAT.md): its
name is the export's, so dropping an export and creating one of the same name replaces
that file. Every reader took it for an immutable file and served it from the cache of
immutable files: a long-lived handle (a mount, a server, a script's Lakehouse) that had
read the export went on serving the old export's tree after another process created it
again, silently; and an expiration run by such a handle marked the old copy's files
instead of the new one's and swept the new export's lakehouse definition and
definitions: the export no longer opened anywhere (StorageFileNotFoundError). An
export dropped and created again while an expiration was marking also stopped that
expiration ("referenced file(s) are missing ... run fsck") although nothing was missing.

Now the root copy is read from storage every time (`lifecycle.mark.read_reused`), and
an expiration marks an export found missing again when a newer version records it."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

import trinityfs.lifecycle.gc as gc
from trinityfs import Lakehouse

NO_FSYNC = {"fsync": False}


def _lake(tmp_path) -> tuple[Lakehouse, str]:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    lake.create_namespace("a")  # 1
    lake.create_table("a", "t1", {"properties": {"k": "1"}})  # 2
    return lake, root


@pytest.mark.parametrize("mode", ["minimal", "partial"])
def test_a_warm_handle_reads_the_export_created_again(tmp_path, mode) -> None:
    lake, root = _lake(tmp_path)
    lake.export("e", 1, mode=mode)
    assert list(lake.at(export="e").list_namespaces()) == ["a"]
    assert list(lake.at(export="e").list_tables("a")) == []
    other = Lakehouse.open(root, storage_options=NO_FSYNC)
    other.drop_export("e")
    other.export("e", 2, mode=mode)
    assert list(lake.at(export="e").list_tables("a")) == ["t1"]
    assert [e.version for e in lake.exports()] == [2]


def test_expiration_by_a_warm_handle_keeps_the_export_created_again(tmp_path) -> None:
    lake, root = _lake(tmp_path)
    lake.export("e", 2)
    with expiring_later():  # marks export e and caches its root copy
        lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    other = Lakehouse.open(root, storage_options=NO_FSYNC)
    other.create_table("a", "t2", {"properties": {"k": "2"}})
    other.drop_export("e")
    other.export("e", other.latest_version())  # the tree with t2
    other.create_table("a", "t3", {"properties": {"k": "3"}})
    other.drop_table("a", "t2")  # t2 is now only the export's
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    fresh = Lakehouse.open(root)
    assert fresh.at(export="e").describe_table("a", "t2").properties["k"] == "2"
    report = fresh.fsck()
    assert report.ok, report.errors


def test_an_export_created_again_while_expiration_marks_is_not_missing(
    tmp_path, monkeypatch
) -> None:
    lake, root = _lake(tmp_path)
    lake.export("e", 2)
    other = Lakehouse.open(root, storage_options=NO_FSYNC)
    real = gc._mark_exports
    calls = []

    def drop_then_mark_then_create(engine, live, root_file) -> None:
        calls.append(1)
        if len(calls) == 1:  # expiration read the record; the export is dropped
            other.drop_export("e")
        real(engine, live, root_file)
        if len(calls) == 1:  # and created again, recorded by a newer version
            other.export("e", other.latest_version())

    monkeypatch.setattr(gc, "_mark_exports", drop_then_mark_then_create)
    expiring = Lakehouse.open(root, storage_options=NO_FSYNC)  # no cached copy
    with expiring_later():
        report = expiring.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert report.missing == []
    monkeypatch.undo()
    fresh = Lakehouse.open(root)
    assert list(fresh.at(export="e").list_tables("a")) == ["t1"]
    assert fresh.fsck().ok
