"""Regression: a mount or trinity:// filesystem kept serving a pinned version from
memory after another process had expired it.

The shared PathModel keeps the snapshots of the versions it resolved (16). After
version 5 was expired elsewhere, `ls v/5/ns`, `cat v/5/ns/t0` (a definition already
read) and `exists v/5/ns/t1` still answered from memory, while `info v/5/ns/t1` said
"expired" and the REST server (which opens the version on every request with
`Lakehouse.at`) answered 404: two front ends disagreed on whether version 5 exists,
and one filesystem disagreed with itself.

Now a kept snapshot is checked as `Lakehouse.at` checks a new one (the oldest marker,
skipped for versions younger than half the commit window), so every pinned path of an
expired version is FileNotFoundError (ENOENT) at once. Found 2026-11-25 (helper
adversary3); fails on 187bd6c.
"""

from __future__ import annotations

import errno
import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from trinityfs import Lakehouse
from trinityfs.catalog import Freshness
from trinityfs.fs import TrinityFileSystem

MINUTES = 30
NO_FSYNC = {"fsync": False}


@contextmanager
def everyone_later() -> Iterator[None]:
    """Expiration's and the catalog's clocks run MINUTES ahead: every root written
    before looks that much older to both (no sleeping for the grace period)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("trinityfs.lifecycle.expire", "trinityfs.catalog.lakehouse"):
            module = importlib.import_module(name)
            real = module.now_millis
            patch.setattr(module, "now_millis", lambda real=real: real() + MINUTES * 60_000)
        yield


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    """Versions 0..21: t0..t9 created (2..11), then each replaced (12..21)."""
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    for i in range(10):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG", "properties": {"a": "1"}})
    for i in range(10):
        lake.replace_table("ns", f"t{i}", {"table_format": "ICEBERG", "properties": {"b": "2"}})
    return lake


def _expire_elsewhere(lake: Lakehouse) -> None:
    other = Lakehouse.open(lake.url, storage_options=NO_FSYNC)
    with everyone_later():
        report = other.expire(max_age_millis=0, min_versions=3, grace_millis=0)
    assert report.oldest_version == 19


PATHS = ["v/5/ns", "v/5/ns/t0", "v/5/ns/t1"]


def test_every_pinned_path_of_an_expired_version_is_no_such_file(lake):
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True, storage_options=NO_FSYNC)
    assert fs.ls("v/5/ns", detail=False) == [f"/v/5/ns/t{i}" for i in range(4)]
    assert fs.cat("v/5/ns/t0")  # held in memory from now on
    _expire_elsewhere(lake)
    with everyone_later():
        for call in (
            lambda: fs.ls("v/5/ns", detail=False),
            lambda: fs.cat("v/5/ns/t0"),
            lambda: fs.info("v/5/ns/t1"),
        ):
            with pytest.raises(FileNotFoundError) as caught:
                call()
            assert caught.value.errno == errno.ENOENT
            assert "version 5 was expired" in str(caught.value)
        for path in PATHS:
            assert not fs.exists(path), path
        assert fs.cat("v/20/ns/t0")  # a kept version still reads


def test_a_young_pinned_version_is_still_read_without_a_request(lake):
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True, storage_options=NO_FSYNC)
    fs.cat("v/5/ns/t0")
    stats = fs.lake.storage.stats
    before = stats.snapshot()["requests"]
    for _ in range(3):
        fs.cat("v/5/ns/t0")
        fs.ls("v/5/ns", detail=False)
    assert stats.snapshot()["requests"] == before


@pytest.mark.parametrize(("bound", "requests"), [(0, 1), (60, 0)])
def test_an_old_pinned_read_checks_the_marker_unless_within_the_staleness_bound(
    lake, bound, requests
):
    """Machine-independent cost: the oldest marker (1 request; the root it names was 2
    before the memo of txn/roots.py `oldest_version`) per read of a version older than
    half the commit window; none within the opt-in staleness bound of the view's last
    check."""
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True, storage_options=NO_FSYNC)
    fs.lake.freshness = Freshness(max_staleness_seconds=bound)
    stats = fs.lake.storage.stats
    with everyone_later():
        fs.cat("v/5/ns/t0")  # opened and checked
        before = stats.snapshot()["requests"]
        fs.cat("v/5/ns/t0")
        assert stats.snapshot()["requests"] - before == requests
