"""A version another process expired was still served by a process that had its root in
memory (it wrote or read it): `lake.at(5)` listed and described objects of version 5
from cached bytes although `_oldest_version.txt` said 79, `lake.changes(5)` listed every
object as created in version 5, `version_at` could answer a version expired during its
search, and a view opened before the expiration reported the definition files the sweep
removed as damage ("file not found ... (the catalog points to it)", EIO through fsspec).

Now an explicit old version is checked against the oldest readable one (one marker read,
skipped for roots younger than half the commit window), a missing file of a view is
reported as the version having expired when it has, and `version_at` searches again
when expiration moved under it. See trinityfs/catalog/expired.py.
"""

from __future__ import annotations

import errno
import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.fs import TrinityFileSystem

MINUTES = 30


@contextmanager
def everyone_later(minutes: float = MINUTES) -> Iterator[None]:
    """Expiration's and the catalog's clocks run `minutes` ahead: every root and file
    written before looks that much older to both (no sleeping for the grace period)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("trinityfs.lifecycle.expire", "trinityfs.catalog.lakehouse"):
            module = importlib.import_module(name)
            real = getattr(module, "now_millis", None)
            if real is None:  # a catalog that never looks at the time
                continue
            patch.setattr(module, "now_millis", lambda real=real: real() + int(minutes * 60_000))
        yield


def _lake(tmp_path) -> Lakehouse:
    """Versions 0..21: t0..t9 created (2..11), then each replaced (12..21), so the
    definitions versions below 12 point at are not referenced by the kept versions."""
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(10):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG", "properties": {"a": "1"}})
    for i in range(10):
        lake.replace_table("ns", f"t{i}", {"table_format": "ICEBERG", "properties": {"b": "2"}})
    assert lake.latest_version() == 21
    return lake


def _expire(lake: Lakehouse) -> int:
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    report = other.expire(max_age_millis=0, min_versions=3, grace_millis=0)
    assert report.oldest_version == 19 and report.removed, report
    return report.oldest_version


def _expire_at_the_first_root_load(reader: Lakehouse, lake: Lakehouse) -> list[int]:
    """The next root `reader` loads is loaded right after an expiration of `lake`
    (keeping 19..21); returns the list that gets the oldest version it kept."""
    roots = reader.engine.roots
    real_load = roots.load
    expired: list[int] = []

    def load_after_an_expiration(version: int):
        if not expired:
            with everyone_later():
                expired.append(_expire(lake))
        return real_load(version)

    roots.load = load_after_an_expiration  # type: ignore[method-assign]
    return expired


def test_the_writer_no_longer_opens_a_version_another_process_expired(tmp_path) -> None:
    lake = _lake(tmp_path)  # every root is in this process's memory
    with everyone_later():
        _expire(lake)
        with pytest.raises(VersionNotFoundError, match=r"version 5 was expired .*oldest .* 19"):
            lake.at(5).list_tables("ns")
        with pytest.raises(VersionNotFoundError, match="version 5 was expired"):
            lake.at(5).describe_table("ns", "t1")
        assert lake.at(19).list_tables("ns") == [f"t{i}" for i in range(10)]  # kept


def test_changes_of_an_expired_version_are_refused_not_listed_as_all_created(tmp_path) -> None:
    lake = _lake(tmp_path)
    with everyone_later():
        _expire(lake)
        with pytest.raises(VersionNotFoundError, match="version 5 was expired"):
            lake.changes(5)
        with pytest.raises(VersionNotFoundError, match="version 5 was expired"):
            lake.diff(5, 21)
        assert [(c.action, c.object.name) for c in lake.changes(20)] == [("replaced", "t8")]


def test_a_view_opened_before_expiration_says_expired_not_damaged(tmp_path) -> None:
    lake = _lake(tmp_path)
    reader = Lakehouse.open(lake.url, storage_options={"fsync": False})
    view = reader.at(5)  # opened while version 5 was readable
    assert view.list_tables("ns") == ["t0", "t1", "t2", "t3"]
    with everyone_later():
        _expire(lake)
    with pytest.raises(VersionNotFoundError, match="expired while it was being read"):
        view.describe_table("ns", "t2")  # its definition file was swept


def test_fsspec_reports_a_swept_file_of_an_expired_version_as_no_such_file(tmp_path) -> None:
    lake = _lake(tmp_path)
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    assert fs.ls("v/5/ns", detail=False)  # the mount-like path model holds version 5
    with everyone_later():
        _expire(lake)
    with pytest.raises(FileNotFoundError) as caught:
        fs.cat("v/5/ns/t2")
    assert caught.value.errno == errno.ENOENT and "expired" in str(caught.value)


def test_version_at_never_answers_a_version_expired_during_its_search(tmp_path) -> None:
    lake = _lake(tmp_path)
    middle = lake.version_info(5).created_at_millis
    expired = _expire_at_the_first_root_load(lake, lake)
    with pytest.raises(VersionNotFoundError, match="the oldest readable version 19"):
        lake.version_at(middle)
    assert expired == [19]
    assert lake.version_at(lake.version_info(20).created_at_millis) == 20


def test_a_young_version_is_opened_without_reading_the_oldest_marker(tmp_path) -> None:
    """The guard: the check costs nothing for versions no expiration can have removed."""
    lake = _lake(tmp_path)
    read: list[str] = []
    for op in ("read", "read_if_regular"):  # markers are read by the second (4da340d)
        real = getattr(lake.storage, op, None)
        if real is None:
            continue

        def counted(location: str, *args, _real=real, **kwargs):
            read.append(location)
            return _real(location, *args, **kwargs)

        setattr(lake.storage, op, counted)
    assert lake.at(5).list_tables("ns")
    assert not [loc for loc in read if "oldest" in loc]
    with everyone_later():  # the same root, now old: the marker is read
        assert lake.at(5).list_tables("ns")
    assert [loc for loc in read if "oldest" in loc]


def test_listing_versions_leaves_out_those_expired_while_it_lists(tmp_path) -> None:
    """`versions()` raised "version N does not exist" when an expiration removed
    versions it had not reached yet; now they are left out (no longer readable)."""
    lake = _lake(tmp_path)
    reader = Lakehouse.open(lake.url, storage_options={"fsync": False})  # roots not in memory
    roots = reader.engine.roots
    real_load = roots.load
    loads: list[int] = []

    def expire_at_the_third(version: int):
        loads.append(version)
        if len(loads) == 3:
            with everyone_later():
                _expire(lake)
        return real_load(version)

    roots.load = expire_at_the_third  # type: ignore[method-assign]
    listed = [info.version for info in reader.versions()]
    assert listed[:2] == [0, 1] and listed[2:] == [19, 20, 21], listed
    with pytest.raises(VersionNotFoundError, match="version 3 was expired"):
        reader.versions(start=3)


def test_version_at_searches_again_when_a_version_it_reads_was_just_expired(tmp_path) -> None:
    """A reader with no root in memory: the search's first root is expired under it."""
    lake = _lake(tmp_path)
    wanted = lake.version_info(20).created_at_millis
    reader = Lakehouse.open(lake.url, storage_options={"fsync": False})
    expired = _expire_at_the_first_root_load(reader, lake)
    assert reader.version_at(wanted) == 20
    assert expired == [19]
