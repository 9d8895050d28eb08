"""Commuting updates: concurrent property updates of one namespace that touch different
property names are re-applied on the newer version instead of failing; real conflicts
still fail, naming the object as users do."""

from __future__ import annotations

import re
import threading

import pytest

from trinityfs.errors import CommitConflictError


def props(lake, ns="ns", version=None) -> dict[str, str]:
    view = lake.at(version) if version is not None else lake
    return dict(view.describe_namespace(ns).properties)


def test_different_property_names_commute(lake) -> None:
    lake.create_namespace("ns", {"keep": "1", "gone": "x"})
    t1, t2 = lake.transaction(), lake.transaction()
    t1.set_namespace_properties("ns", {"a": "1"})
    t2.set_namespace_properties("ns", {"b": "2"}, removals=["gone"])
    v1 = t1.commit()
    v2 = t2.commit()
    assert (v1, v2) == (2, 3)
    assert props(lake) == {"keep": "1", "a": "1", "b": "2"}
    assert props(lake, version=v1) == {"keep": "1", "gone": "x", "a": "1"}
    ids = {lake.at(v).describe_namespace("ns").id for v in (1, v1, v2)}
    assert len(ids) == 1  # the namespace keeps its identity
    assert t2.txn.replays == 1
    assert [(c.action, str(c.object)) for c in lake.changes(v2)] == [("replaced", "ns")]
    lake.check()


def test_reapply_keeps_the_winners_other_changes(lake) -> None:
    lake.create_namespace("ns", {"a": "0"})
    t1 = lake.transaction()
    t1.set_namespace_properties("ns", {"mine": "yes"})
    with lake.transaction() as other:
        other.replace_namespace("ns", {"properties": {"a": "0", "theirs": "1"}})
    t1.commit()
    assert props(lake) == {"a": "0", "theirs": "1", "mine": "yes"}


def test_same_property_name_is_a_real_conflict_named_by_catalog_name(lake) -> None:
    lake.create_namespace("ns")
    t1, t2 = lake.transaction(), lake.transaction()
    t1.set_namespace_properties("ns", {"owner": "alice"})
    t2.set_namespace_properties("ns", {"owner": "bob", "other": "x"})
    t1.commit()
    with pytest.raises(CommitConflictError) as info:
        t2.commit()
    message = str(info.value)
    assert "namespace 'ns'" in message and "'owner'" in message and "version 2" in message
    assert not re.search(r"\s{2,}", message), message  # never the padded key
    assert info.value.version == 2
    assert props(lake) == {"owner": "alice"}


def test_removing_a_name_another_writer_set_conflicts(lake) -> None:
    lake.create_namespace("ns", {"x": "1"})
    t1, t2 = lake.transaction(), lake.transaction()
    t1.set_namespace_properties("ns", {"x": "2"})
    t2.set_namespace_properties("ns", removals=["x"])
    t1.commit()
    with pytest.raises(CommitConflictError, match="'x'"):
        t2.commit()


def test_dropped_namespace_conflicts(lake) -> None:
    lake.create_namespace("ns")
    t1 = lake.transaction()
    t1.set_namespace_properties("ns", {"a": "1"})
    lake.drop_namespace("ns")
    with pytest.raises(CommitConflictError, match="namespace 'ns' was dropped by version 2"):
        t1.commit()
    assert lake.list_namespaces() == []


def test_several_updates_in_one_transaction_reapply_together(lake) -> None:
    lake.create_namespace("ns", {"a": "0", "b": "0"})
    t1 = lake.transaction()
    t1.set_namespace_properties("ns", {"a": "1"})
    t1.set_namespace_properties("ns", {"c": "1"}, removals=["b"])
    lake.set_namespace_properties("ns", {"d": "1"})
    t1.commit()
    assert props(lake) == {"a": "1", "c": "1", "d": "1"}


def test_second_update_touching_a_winner_name_conflicts(lake) -> None:
    lake.create_namespace("ns", {"a": "0"})
    t1 = lake.transaction()
    t1.set_namespace_properties("ns", {"x": "1"})
    t1.set_namespace_properties("ns", {"a": "1"})
    lake.set_namespace_properties("ns", {"a": "2"})
    with pytest.raises(CommitConflictError, match="'a'"):
        t1.commit()


def test_a_replaced_namespace_does_not_commute(lake) -> None:
    """A transaction that replaced the whole definition depends on all of it."""
    lake.create_namespace("ns")
    t1 = lake.transaction()
    t1.replace_namespace("ns", {"properties": {"a": "1"}})
    t1.set_namespace_properties("ns", {"b": "1"})
    lake.set_namespace_properties("ns", {"c": "1"})
    with pytest.raises(CommitConflictError, match="namespace 'ns' was changed by version 2"):
        t1.commit()


def test_serializable_transactions_still_conflict(lake) -> None:
    lake.create_namespace("ns")
    t1 = lake.transaction(isolation="SERIALIZABLE")
    t1.set_namespace_properties("ns", {"a": "1"})
    lake.set_namespace_properties("ns", {"b": "1"})
    with pytest.raises(CommitConflictError, match="namespace 'ns', read by this serializable"):
        t1.commit()


def test_eight_writers_on_different_names_all_succeed(lake) -> None:
    lake.create_namespace("ns")
    errors: list[BaseException] = []
    rounds = 6

    def writer(w: int) -> None:
        try:
            for r in range(rounds):
                lake.set_namespace_properties("ns", {f"w{w}": str(r)})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert props(lake) == {f"w{w}": str(rounds - 1) for w in range(8)}
    assert lake.latest_version() == 1 + 8 * rounds
    # every version is the previous one plus exactly one writer's update: nothing lost
    for v in range(2, lake.latest_version() + 1):
        before, after = props(lake, version=v - 1), props(lake, version=v)
        changed = {k for k in after if before.get(k) != after[k]}
        assert len(changed) == 1 and set(before) <= set(after)
