"""Version arguments that `at()` refuses were taken unchecked elsewhere: `check(True)`,
`lakehouse_def(True)` and `location_at(True, ...)` read version 1; `last_changed` and
`created` took `oldest=True/nan/inf/2**70` (an oldest above `at` answered `at` itself,
so "created at version 21" for an object created at 1) and a str raised a bare
TypeError; a list as a version raised "unhashable type". Every one is now
InvalidArgumentError naming the value (the rule of `at()`: format/paths.check_version);
so is `at(export=...)` with a name no export can have (not a str, empty, not UTF-8),
and an allow-list that is not str."""

from __future__ import annotations

import math

import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import InvalidArgumentError, InvalidNameError, LocationNotAllowedError

BAD_VERSIONS = [True, 1.0, "1", [1], {}, -1, 2**70]


@pytest.fixture()
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path))
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    for i in range(3):
        lake.create_table("ns", f"other{i}")
    return lake


@pytest.mark.parametrize("bad", BAD_VERSIONS, ids=repr)
@pytest.mark.parametrize("call", ["check", "lakehouse_def", "location_at", "put_base"])
def test_versions_are_checked(lake, call, bad):
    with pytest.raises(InvalidArgumentError, match="version"):
        if call == "location_at":
            lake.location_at(bad, "x")
        elif call == "put_base":
            lake.put_object("table", "ns", "t", None, base_version=bad)
        else:
            getattr(lake, call)(bad)


@pytest.mark.parametrize("bad", [True, "2", math.nan, math.inf, 2**70, [1]], ids=repr)
@pytest.mark.parametrize("method", ["last_changed", "created"])
def test_history_oldest_and_at_are_checked(lake, method, bad):
    with pytest.raises(InvalidArgumentError):
        getattr(lake, method)("ns", "t", oldest=bad)
    with pytest.raises(InvalidArgumentError):
        getattr(lake, method)("ns", "t", at=bad)


@pytest.mark.parametrize("method", ["last_changed", "created"])
def test_an_oldest_above_at_is_refused_not_answered_with_at(lake, method):
    latest = lake.latest_version()
    assert getattr(lake, method)("ns", "t").version == 2
    assert getattr(lake, method)("ns", "t", oldest=0).version == 2
    with pytest.raises(InvalidArgumentError, match="above"):
        getattr(lake, method)("ns", "t", oldest=latest + 5)
    with pytest.raises(InvalidArgumentError, match="above"):
        getattr(lake, method)("ns", "t", at=3, oldest=4)


@pytest.mark.parametrize("bad", [7, "\ud800", "", b"x"], ids=repr)
def test_at_export_name_is_checked(lake, bad):
    with pytest.raises(InvalidNameError):
        lake.at(export=bad)


def test_location_at_key_must_be_a_str(lake):
    with pytest.raises(InvalidArgumentError, match="key"):
        lake.location_at(1, ["k"])


@pytest.mark.parametrize("bad", [7, True, {"a": 1}.items(), b"s3://x"], ids=repr)
def test_allow_list_must_be_str_or_list_of_str(lake, bad):
    with pytest.raises(InvalidArgumentError, match="allowed locations"):
        lake.confinement(allowed=bad)


def test_allow_list_with_a_lone_surrogate_is_refused_by_name(lake):
    with pytest.raises(LocationNotAllowedError, match="surrogate"):
        lake.confinement(allowed="/tmp/\ud800")


def test_valid_arguments_still_work(lake):
    assert lake.check(1).keys >= 0
    assert lake.lakehouse_def(1).order > 0
    assert lake.location_at(lake.latest_version(), "nothing-here") is None
    assert lake.confinement(allowed=["/tmp/a", "/tmp/b"]).allowed[1:] == ("/tmp/a", "/tmp/b")
    assert lake.confinement(allowed="/tmp/a,/tmp/b").allowed[1:] == ("/tmp/a", "/tmp/b")
