"""A writer whose clock runs ahead stamps its version with a `created_at_millis` in the
future, and every later version is stamped after it (created_at = max(now, previous + 1)).
Time travel then picked the version before the skewed one for every time up to that
future: `version_at(now)` answered version 1 while versions 2..4 existed, were committed
before now, and `ls /v/<now>/` listed the lakehouse as it was before them, silently.

Now, when the version after the one a time selects records a commit time beyond this
clock's now (by more than a minute), a time at or after now selects the latest version
(every version there is was committed before now, whatever it recorded) and an earlier
time is refused (VersionNotFoundError naming that version and its recorded time)
instead of answered wrong; times before the skewed version still resolve, and recorded
times within the minute are taken as they are (a version's time from `log` selects it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from future_stamps import lake_with_a_future_stamp

from trinityfs import Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.txn.engine import now_millis


def _skewed_lake(tmp_path, monkeypatch) -> Lakehouse:
    # version 2 committed by a clock a year ahead, then namespaces b (3) and c (4)
    return lake_with_a_future_stamp(str(tmp_path / "lake"), monkeypatch, later=("b", "c"))


def test_now_selects_the_latest_version(tmp_path, monkeypatch) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch)
    # a time after the lookup's own "now" (a time taken just before it is a few ms older
    # than that now, and a time before now past a skewed stamp is refused: CI flaked)
    later = datetime.now(UTC) + timedelta(seconds=5)
    assert lake.version_at(now_millis() + 5000) == 4
    assert lake.version_at(later) == 4
    assert lake.resolve(later.isoformat()).version == 4


def test_a_time_the_skew_hides_is_refused_not_answered_wrong(tmp_path, monkeypatch) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch)
    before = lake.version_info(1).created_at_millis
    with pytest.raises(VersionNotFoundError, match="version 2"):
        lake.version_at(before)  # 1? or 2, 3, 4 if they landed within the same millisecond
    assert lake.version_at(lake.version_info(0).created_at_millis) == 0
