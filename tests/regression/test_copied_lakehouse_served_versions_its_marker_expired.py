"""Regression: readers judge an oldest marker by store mtimes (a marker more than 2 s
older than the root it names was written before that root existed: a lie the lakehouse
caught up with, 2454142). A lakehouse copied without its mtimes (`cp -r`, `aws s3
sync`: every file gets the time it was copied, in the copy's order), where the marker
was copied more than 2 s before the root it names, was read as "outrun": readers took
the oldest root listed. Where expiration had written the marker but not yet deleted
the roots below it (a crash, or a copy taken while it ran), the copy served versions
the original refuses as expired (`oldest_version`, `versions()`). Now an outrun by
the mtimes is confirmed by the root's created_at_millis, which a copy keeps: a root
stamped more than an hour before the marker's mtime existed when the marker was written.
A lie from the future (the root stamped after the marker was written) is still caught,
also when the writers' clock runs minutes behind the store's (review F8: with a 60 s
margin a writer 5 min behind made such a lie look true).
"""

from __future__ import annotations

import os
import time

import pytest
from copied_lakes import copy_without_mtimes
from copied_lakes import expired_halfway as _expired_halfway

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION
from trinityfs.txn import publish

NO_FSYNC = {"fsync": False}


@pytest.fixture
def expired_halfway(tmp_path) -> str:
    """Versions 0..7; expiration wrote the marker (5) and crashed before deleting roots."""
    src = _expired_halfway(str(tmp_path / "src"))
    assert Lakehouse.open(src, storage_options=NO_FSYNC).oldest_version() == 5
    return src


def test_a_copy_refuses_what_the_original_refuses(expired_halfway, tmp_path) -> None:
    copy = str(tmp_path / "copy")
    copy_without_mtimes(expired_halfway, copy, marker_first_by=5)
    lake = Lakehouse.open(copy, storage_options=NO_FSYNC)
    assert lake.oldest_version() == 5
    assert [v.version for v in lake.versions()] == [5, 6, 7]


@pytest.mark.parametrize("writers_behind_millis", [0, 300_000])
def test_a_lie_from_the_future_is_still_caught(
    tmp_path, monkeypatch, writers_behind_millis
) -> None:
    real_now = publish.now_millis
    monkeypatch.setattr(publish, "now_millis", lambda: real_now() - writers_behind_millis)
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    for i in range(3):
        lake.create_namespace(f"n{i}")  # 1..3
    marker = os.path.join(root, OLDEST_VERSION)
    with open(marker, "w") as f:
        f.write("6")  # a lie: the latest version is 3
    past = time.time() - 30  # written half a minute before roots 4..6 (stamped now)
    os.utime(marker, (past, past))
    for i in range(3, 6):
        lake.create_namespace(f"n{i}")  # 4..6
    fresh = Lakehouse.open(root, storage_options=NO_FSYNC)
    assert fresh.oldest_version() == 0
    assert [v.version for v in fresh.versions()] == list(range(7))
