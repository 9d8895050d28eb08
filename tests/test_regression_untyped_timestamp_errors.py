"""Regression: time travel by timestamp raised untyped errors on hostile input.

Found by fuzzing (tests/stress/test_fuzz.py): ``at(timestamp=...)`` and ``version_at``
raised a bare ValueError for a naive datetime or a string, OverflowError for infinity
or a datetime out of the platform's range, and a time far before the oldest version
made the error message itself fail (OverflowError/OSError formatting the time). Every
one is now an InvalidArgumentError (still a ValueError) or the VersionNotFoundError the
lookup meant to raise.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError, VersionNotFoundError


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    return lake


@pytest.mark.parametrize(
    "timestamp",
    [
        datetime(2026, 1, 1),  # naive
        "",
        "yesterday",
        float("inf"),
        float("nan"),
        None,
        [1],
        True,
    ],
)
def test_bad_timestamps_are_invalid_arguments(lake: Lakehouse, timestamp) -> None:
    if timestamp is not None:  # at(timestamp=None) means "no timestamp": the latest
        with pytest.raises(InvalidArgumentError):
            lake.at(timestamp=timestamp)
    with pytest.raises(InvalidArgumentError):
        lake.version_at(timestamp)


@pytest.mark.parametrize(
    "timestamp",
    [
        datetime.min.replace(tzinfo=UTC),
        datetime.min.replace(tzinfo=timezone(timedelta(hours=23))),
        datetime.max.replace(tzinfo=timezone(timedelta(hours=-23))),
    ],
)
def test_extreme_datetimes_are_typed(lake: Lakehouse, timestamp) -> None:
    with contextlib.suppress(InvalidArgumentError, VersionNotFoundError):
        assert lake.version_at(timestamp) == 1


@pytest.mark.parametrize("millis", [-(2**70), -1, 0, -(10**15)])
def test_times_before_the_first_version_are_not_found(lake: Lakehouse, millis: int) -> None:
    with pytest.raises(VersionNotFoundError, match="no version at or before"):
        lake.version_at(millis)


def test_good_timestamps_still_work(lake: Lakehouse) -> None:
    created = lake.version_info(1).created_at_millis
    assert lake.version_at(created) == 1
    assert lake.version_at(float(created)) == 1
    assert lake.version_at(2**70) == 1
    assert lake.at(timestamp=datetime.now(UTC)).version == 1
