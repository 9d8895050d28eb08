"""The oldest readable version, asked again and again (a reader checking an old pinned
version on every use, `Lakehouse.check_readable`: `ls -l` of 1,000 old files through the
mount): it read the oldest marker and checked that the root it names exists, two
requests every time. Now the marker is still read every time (it only moves up, so "v
is readable" may turn false at any moment), but that its root exists is remembered for
the value read, within the trust window: one request.
"""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.format.paths import OLDEST_VERSION, root_node_file

NO_FSYNC = {"fsync": False}


def _expired_lake(where) -> Lakehouse:
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    for i in range(6):
        lake.create_namespace(f"n{i}")
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=4, grace_millis=0)
    reader = Lakehouse.open(url, storage_options=options)
    reader.at(reader.latest_version())  # reads a lakehouse definition, as any reader
    return reader


def _requests(lake: Lakehouse) -> dict[str, int]:
    counts = lake.storage.stats.snapshot()
    return {k: counts[k] for k in ("read", "exists", "list")}


def _delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in before}


def test_asking_again_reads_only_the_marker(where) -> None:
    lake = _expired_lake(where)
    roots = lake.engine.roots
    oldest = roots.oldest_version()
    assert oldest == 3
    before = _requests(lake)
    for _ in range(10):
        assert roots.oldest_version() == oldest
    assert _delta(before, _requests(lake)) == {"read": 10, "exists": 0, "list": 0}
    # the marker moved (another process expired more): seen at the next question
    url, options = where
    other = Lakehouse.open(url, storage_options=options)
    other.create_namespace("n6")
    with expiring_later():
        other.expire(max_age_millis=0, min_versions=2, grace_millis=0)
    assert roots.oldest_version() == 6
    with pytest.raises(VersionNotFoundError, match="expired"):
        lake.at(5)


def test_the_root_is_checked_again_after_the_window(where) -> None:
    lake = _expired_lake(where)
    roots = lake.engine.roots
    now = [1000.0]
    roots._clock = lambda: now[0]
    assert roots.oldest_version() == 3
    # the marker's root vanishes (damage): within the window the memo answers ...
    lake.storage.delete(root_node_file(3))
    assert roots.oldest_version() == 3
    # ... past it, the root is checked again and the lie is found (listing)
    now[0] += 3600
    assert roots.oldest_version() == 4
    assert lake.storage.read(OLDEST_VERSION) == b"3"
