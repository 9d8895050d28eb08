"""Three overlapping expirations: the faster run C wrote marker 10 and deletes roots 0..9
in parallel; the slower run A re-read the marker just before C's write and wrote 5 over
it (no compare-and-swap). While root 5 was still there and C had already deleted, say,
roots 6..9, readers believed marker 5 and reported damage: "the root of a kept version
was lost (run `trinityfs fsck`)" for versions that were expired, and `versions()`
failed. Now a reader looks again (a few short waits, 1.5 s at most) before it calls a
root lost: once C deleted root 5, marker 5 names no root, the oldest version comes from
the roots, and the answer is "version 7 was expired". A root really lost still is
reported as lost."""

from __future__ import annotations

import os
import threading

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, VersionNotFoundError
from trinityfs.format.paths import OLDEST_VERSION, root_node_file


@pytest.fixture
def raced(tmp_path) -> str:
    """Versions 0..21; roots 0..4 and 6..9 deleted by C, marker 5 written by A."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")
    for i in range(20):
        lake.create_table("ns", f"t{i}")
    for v in [*range(5), *range(6, 10)]:
        os.remove(os.path.join(root, root_node_file(v)))
    lake.engine.storage.write(OLDEST_VERSION, b"5")
    return root


def _c_finishes(root: str, after: float) -> threading.Timer:
    """C deletes root 5, its last one, `after` seconds from now."""
    timer = threading.Timer(after, os.remove, [os.path.join(root, root_node_file(5))])
    timer.start()
    return timer


def test_a_version_expired_by_the_faster_run_is_expired_not_lost(raced) -> None:
    reader = Lakehouse.open(raced)
    assert reader.oldest_version() == 5
    timer = _c_finishes(raced, 0.2)
    try:
        with pytest.raises(VersionNotFoundError, match="version 7 was expired"):
            reader.at(version=7)
    finally:
        timer.join()
    assert reader.oldest_version() == 10
    assert [i.version for i in reader.versions()] == list(range(10, 22))


def test_history_is_listed_once_the_faster_run_finished(raced) -> None:
    reader = Lakehouse.open(raced)
    timer = _c_finishes(raced, 0.2)
    try:
        versions = [i.version for i in reader.versions()]
    finally:
        timer.join()
    # version 5 may be listed: it was readable when read, before C deleted its root
    assert [v for v in versions if v != 5] == list(range(10, 22)), versions


def test_a_root_really_lost_is_still_reported(raced) -> None:
    """Guard: nothing deletes root 5; roots 6..9 stay missing below a true marker."""
    reader = Lakehouse.open(raced)
    with pytest.raises(CorruptFileError, match="the root of a kept version was lost"):
        reader.at(version=7)
