"""`lake.diff(0, "")` and `lake.changes("")` raised a bare TypeError ("'<' not supported
between instances of 'str' and 'int'") on main 7d3f210..b7ea18a: the expiration check
added there compared the argument before anything validated it (found by
tests/stress/test_fuzz.py::test_versions_and_times in the fresh-clone CI). A version
that is no int in 0..2^64-1 is InvalidArgumentError naming it, as `at` and
`version_info` say; one above the latest says so."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError, VersionNotFoundError

NOT_VERSIONS = ["", "3", None, 1.5, float("nan"), True, -1, 2**70]


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    return lake


@pytest.mark.parametrize("bad", NOT_VERSIONS, ids=repr)
def test_a_non_version_is_an_invalid_argument_everywhere(lake, bad) -> None:
    calls = [lambda: lake.diff(0, bad), lambda: lake.diff(bad, 1), lambda: lake.changes(bad)]
    if bad is not None:  # versions(0, None): up to the latest
        calls.append(lambda: lake.versions(0, bad))
    for call in calls:
        with pytest.raises(InvalidArgumentError, match="version"):
            call()


def test_a_version_above_the_latest_says_so(lake) -> None:
    for call in (lambda: lake.diff(0, 5), lambda: lake.changes(5)):
        with pytest.raises(VersionNotFoundError, match=r"version 5 does not exist .*latest .* 1"):
            call()
