"""A version stamped in the future (its writer's clock ran ahead) blocked expiration by
age with no way out: every later version is stamped after it, and no option got past
it (not even --max-age 0 --min-versions 1: the age and grace rules both read stamps).
It was named (4f3f4e1), but the operator could only wait for this clock to pass it.
Now `future_stamps="store-time"` (`trinityfs expire --future-stamps store-time`) ages
the versions stamped in the future by the time the store wrote their roots, the clock
the sweep already trusts; the default is unchanged, and the warning names the option."""

from __future__ import annotations

import json

import pytest
from expire_clock import expiring_later
from future_stamps import lake_with_a_future_stamp
from regression_cli import run

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError

AGGRESSIVE = {"max_age_millis": 0, "min_versions": 1, "grace_millis": 0}


def _skewed_lake(tmp_path, monkeypatch, where=None) -> Lakehouse:
    url, options = where or (str(tmp_path / "lake"), {"fsync": False})
    return lake_with_a_future_stamp(url, monkeypatch, storage_options=options)  # 2 ahead


def test_store_time_expires_past_a_future_stamp(tmp_path, monkeypatch, where) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch, where)
    with expiring_later():
        kept = lake.expire(**AGGRESSIVE)
        assert kept.oldest_version == 1  # the default still keeps them
        report = lake.expire(**AGGRESSIVE, future_stamps="store-time")
    assert report.oldest_version == 5, report.to_dict(files=False)
    assert report.roots_removed == 4
    assert report.future_stamp is not None and report.future_stamp.version == 2
    assert report.to_dict()["policy"]["future_stamps"] == "store-time"
    fresh = Lakehouse.open(lake.url, storage_options=where[1])
    assert fresh.fsck().ok
    assert sorted(fresh.list_namespaces()) == ["a", "b0", "b1", "b2", "skewed"]


def test_store_time_still_keeps_what_the_store_wrote_recently(tmp_path, monkeypatch, where) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch, where)
    with expiring_later():  # 10 minutes: younger than a day by the store's time
        report = lake.expire(
            max_age_millis=86_400_000, min_versions=1, grace_millis=0, future_stamps="store-time"
        )
    assert report.oldest_version == 0 and report.roots_removed == 0


def test_cli_option_and_the_warning_names_it(tmp_path, monkeypatch) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch)
    aggressive = ["--max-age", "0", "--min-versions", "1", "--grace", "0"]
    with expiring_later():
        default = run(lake.url, "expire", *aggressive)
        assert default.status == 0
        assert "--future-stamps store-time" in default.err
        done = run(lake.url, "--json", "expire", *aggressive, "--future-stamps", "store-time")
    assert done.status == 0, done.err
    data = json.loads(done.out)
    assert data["oldest_version"] == 5 and data["expired_versions"] == 4
    assert "aged by the store's time" in done.err


def test_unknown_mode_refused(tmp_path, monkeypatch) -> None:
    lake = _skewed_lake(tmp_path, monkeypatch)
    with pytest.raises(InvalidArgumentError, match="future_stamps"):
        lake.expire(future_stamps="ignore")
    bad = run(lake.url, "expire", "--future-stamps", "ignore")
    assert bad.status == 2 and len(bad.err.strip().splitlines()) == 1, bad.err
    assert lake.latest_version() == 5


def test_store_times_never_go_below_the_stamp_before_nor_down() -> None:
    from trinityfs.lifecycle.stamps import store_aged

    stamps = {3: 1_000, 4: 10**15, 5: 10**15 + 1, 6: 10**15 + 2}
    stored = {4: 500, 5: 2_000, 6: 1_500}  # 4 below the stamp of 3; 6 before 5
    aged = store_aged(stamps.__getitem__, 4, stamps[3], 7, stored.get, 10, now=9_999)
    assert [aged(v) for v in range(3, 8)] == [1_000, 1_000, 2_010, 2_010, 9_999]
