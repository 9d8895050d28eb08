"""`last_changed` / `created`: bisection over versions, checked against a linear walk."""

from __future__ import annotations

import math
import random

import pytest

from trinityfs.errors import NamespaceNotFoundError, ObjectNotFoundError


def _walk_last_changed(lake, ns, name, at):
    """Oracle: walk back from `at` while the definition location stays the same."""

    def loc(v):
        snap = lake.at(v)
        if name is None:
            return snap._view.get(snap.keys.namespace_key(ns))
        kind = snap.object_kind(ns, name)
        return None if kind is None else (kind, snap.object_location(kind, ns, name))

    now = loc(at)
    v = at
    while v > lake.oldest_version() and loc(v - 1) == now:
        v -= 1
    return v


def test_last_changed_is_the_version_that_wrote_the_current_definition(lake):
    lake.create_namespace("ns")  # 1
    lake.create_table("ns", "t")  # 2
    lake.create_table("ns", "other")  # 3
    lake.replace_table("ns", "t", {"properties": {"a": "1"}})  # 4
    lake.create_table("ns", "third")  # 5
    lake.set_namespace_properties("ns", {"p": "q"})  # 6
    lake.create_table("ns", "fourth")  # 7
    assert lake.last_changed("ns", "t").version == 4
    assert lake.last_changed("ns", "t").created_at_millis == lake.version_info(4).created_at_millis
    assert lake.last_changed("ns", "t", at=3).version == 2
    assert lake.last_changed("ns", "other").version == 3
    assert lake.last_changed("ns").version == 6  # the namespace's own definition
    assert lake.created("ns", "t").version == 2  # a replace keeps the creation
    assert lake.created("ns").version == 1


def test_drop_and_recreate_starts_a_new_life(lake):
    lake.create_namespace("ns")  # 1
    lake.create_table("ns", "t")  # 2
    lake.drop_table("ns", "t")  # 3
    lake.create_table("ns", "t")  # 4
    lake.replace_table("ns", "t", {"properties": {"x": "y"}})  # 5
    assert lake.created("ns", "t").version == 4
    assert lake.last_changed("ns", "t").version == 5
    lake.rename_table("ns", "t", "ns", "u")  # 6: the new name is created by the rename
    assert lake.created("ns", "u").version == 6
    with pytest.raises(ObjectNotFoundError):
        lake.last_changed("ns", "t")
    with pytest.raises(NamespaceNotFoundError):
        lake.created("nope")


def test_bisection_matches_a_linear_walk_on_a_random_history(lake):
    rng = random.Random(7)
    lake.create_namespace("ns")
    names = [f"t{i}" for i in range(6)]
    for _ in range(60):
        name = rng.choice(names)
        exists = name in lake.list_tables("ns")
        op = rng.random()
        if not exists:
            lake.create_table("ns", name, {"properties": {"n": str(op)}})
        elif op < 0.6:
            lake.replace_table("ns", name, {"properties": {"n": str(op)}})
        elif op < 0.8:
            lake.drop_table("ns", name)
        else:
            lake.set_namespace_properties("ns", {"n": str(op)})
    latest = lake.latest_version()
    for at in (latest, latest - 7, latest - 30):
        snap = lake.at(at)
        for name in snap.list_tables("ns"):
            assert lake.last_changed("ns", name, at=at).version == _walk_last_changed(
                lake, "ns", name, at
            )
        assert lake.last_changed("ns", at=at).version == _walk_last_changed(lake, "ns", None, at)


def test_lookups_grow_with_the_log_of_the_number_of_versions(lake, monkeypatch):
    lake.create_namespace("ns")
    lake.create_table("ns", "t")  # 2: never changes again
    for i in range(254):
        lake.set_namespace_properties("ns", {"i": str(i)})
    versions = lake.latest_version() + 1
    calls = []
    original = lake.location_at
    monkeypatch.setattr(lake, "location_at", lambda v, k: calls.append(v) or original(v, k))
    assert lake.last_changed("ns", "t").version == 2
    # at most 2 probes to find the object at `at`, then ceil(log2(versions)) bisection steps
    assert len(calls) <= 2 + math.ceil(math.log2(versions)), len(calls)


def test_after_a_rollback_the_answer_is_a_version_holding_this_very_definition(lake):
    lake.create_namespace("ns")  # 1
    lake.create_table("ns", "t", {"properties": {"a": "1"}})  # 2
    lake.replace_table("ns", "t", {"properties": {"a": "2"}})  # 3
    lake.rollback(2)  # 4: t is back to the definition file written by version 2
    answer = lake.last_changed("ns", "t").version
    assert answer in (2, 4)
    here = lake.at(4).object_location("table", "ns", "t")
    assert lake.at(answer).object_location("table", "ns", "t") == here
