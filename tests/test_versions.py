"""Versions: listing, read-only old versions, time travel, change sets, diff, rollback."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from trinityfs.errors import ReadOnlyError, VersionNotFoundError


@pytest.fixture
def history(lake):
    lake.create_namespace("ns")  # 1
    lake.create_table("ns", "a", {"properties": {"gen": "1"}})  # 2
    lake.create_table("ns", "b")  # 3
    lake.replace_table("ns", "a", {"properties": {"gen": "2"}})  # 4
    lake.drop_table("ns", "b")  # 5
    return lake


def test_versions_listed_oldest_first(history) -> None:
    infos = history.versions()
    assert [i.version for i in infos] == [0, 1, 2, 3, 4, 5]
    assert infos[-1].created_at_millis >= infos[0].created_at_millis


def test_old_versions_read_as_they_were_and_are_read_only(history) -> None:
    v3 = history.at(3)
    assert v3.list_tables("ns") == ["a", "b"]
    assert v3.describe_table("ns", "a").properties["gen"] == "1"
    with pytest.raises(ReadOnlyError, match="read-only"):
        v3.create_table("ns", "c")
    with pytest.raises(VersionNotFoundError):
        history.at(99)


def test_change_sets(history) -> None:
    summary = lambda v: [(c.action, str(c.object)) for c in history.changes(v)]  # noqa: E731
    assert summary(1) == [("created", "ns")]
    assert summary(4) == [("replaced", "ns.a")]
    assert summary(5) == [("dropped", "ns.b")]


def test_diff(history) -> None:
    diff = [(c.action, str(c.object)) for c in history.diff(1, 5)]
    assert diff == [("created", "ns.a")]
    diff = [(c.action, str(c.object)) for c in history.diff(3, 5)]
    assert diff == [("replaced", "ns.a"), ("dropped", "ns.b")]


def test_time_travel(lake) -> None:
    lake.create_namespace("ns")
    marks = []
    for i in range(6):
        lake.create_table("ns", f"t{i}")
        marks.append((lake.latest_version(), int(time.time() * 1000)))
        time.sleep(0.01)
    for version, millis in marks:
        assert lake.version_at(millis) == version
        moment = datetime.fromtimestamp(millis / 1000, UTC)
        assert lake.at(timestamp=moment).version <= version
    with pytest.raises(VersionNotFoundError, match="no version at or before"):
        lake.version_at(0)


def test_rollback_rolls_forward(history) -> None:
    new_version = history.rollback(3)
    assert new_version == 6
    assert history.list_tables("ns") == ["a", "b"]
    assert history.describe_table("ns", "a").properties["gen"] == "1"
    info = history.version_info(6)
    assert info.rollback_from == 5
    assert [(c.action, str(c.object)) for c in history.changes(6)] == [
        ("replaced", "ns.a"),
        ("created", "ns.b"),
    ]
    history.check()
    history.create_table("ns", "c")  # the tree keeps working after a rollback
    assert history.list_tables("ns") == ["a", "b", "c"]
    history.check()
