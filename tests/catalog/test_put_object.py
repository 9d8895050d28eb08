"""`put` / `Lakehouse.put_object`: an upsert of a definition against a base version."""

from __future__ import annotations

import pytest

from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    InvalidArgumentError,
    NamespaceNotFoundError,
    ObjectChangedError,
    ObjectNotFoundError,
)


@pytest.fixture
def lake1(lake):
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"properties": {"k": "1"}})
    return lake


def test_put_creates_then_replaces_keeping_the_id(lake1):
    made = lake1.put_object("table", "ns", "new", {"properties": {"a": "b"}})
    assert (made.action, made.previous_kind, made.version) == ("created", None, 3)
    first_id = lake1.describe_table("ns", "new").id
    assert first_id
    again = lake1.put_object("table", "ns", "new", {"properties": {"a": "c"}})
    assert (again.action, again.version) == ("replaced", 4)
    assert lake1.describe_table("ns", "new").id == first_id
    assert lake1.describe_table("ns", "new").properties["a"] == "c"


def test_an_unchanged_put_commits_nothing(lake1):
    before = lake1.latest_version()
    result = lake1.put_object("table", "ns", "t", {"properties": {"k": "1"}})
    assert (result.action, result.version) == ("unchanged", None)
    assert lake1.latest_version() == before


def test_base_version_conflicts_when_the_object_changed_since(lake1):
    base = lake1.latest_version()
    lake1.replace_table("ns", "t", {"properties": {"k": "2"}})
    with pytest.raises(ObjectChangedError, match=r"table ns\.t was replaced after version 2") as e:
        lake1.put_object("table", "ns", "t", {"properties": {"k": "3"}}, base_version=base)
    assert isinstance(e.value, CommitConflictError)
    assert e.value.base_version == base
    assert lake1.describe_table("ns", "t").properties["k"] == "2"  # nothing written


def test_base_version_conflicts_on_created_and_dropped_objects(lake1):
    base = lake1.latest_version()
    lake1.create_view("ns", "x")
    with pytest.raises(ObjectChangedError, match="created"):
        lake1.put_object("table", "ns", "x", {}, base_version=base)
    base = lake1.latest_version()
    lake1.drop_table("ns", "t")
    with pytest.raises(ObjectChangedError, match="dropped"):
        lake1.put_object("table", "ns", "t", {}, base_version=base)


def test_base_version_passes_when_only_other_objects_changed(lake1):
    base = lake1.latest_version()
    lake1.create_table("ns", "other")
    result = lake1.put_object("table", "ns", "t", {"properties": {"k": "9"}}, base_version=base)
    assert result.action == "replaced"


def test_modes(lake1):
    with pytest.raises(AlreadyExistsError):
        lake1.put_object("table", "ns", "t", {}, mode="create")
    with pytest.raises(ObjectNotFoundError):
        lake1.put_object("table", "ns", "missing", {}, mode="replace")
    with pytest.raises(InvalidArgumentError):
        lake1.put_object("table", "ns", "t", {}, mode="merge")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        lake1.put_object("namespace", "ns", "t", {})  # type: ignore[arg-type]


def test_missing_namespace_is_an_error_unless_asked_to_create_it(lake1):
    with pytest.raises(NamespaceNotFoundError):
        lake1.put_object("table", "nope", "t", {})
    result = lake1.put_object("view", "nope", "v", {}, create_namespace=True)
    assert result.action == "created"
    assert lake1.list_views("nope") == ["v"]


def test_another_kind_replaces_the_object(lake1):
    old_id = lake1.describe_table("ns", "t").id
    result = lake1.put_object("view", "ns", "t", {"properties": {"q": "r"}})
    assert (result.action, result.kind, result.previous_kind) == ("replaced", "view", "table")
    assert lake1.list_tables("ns") == [] and lake1.list_views("ns") == ["t"]
    assert lake1.describe_view("ns", "t").id != old_id


def test_put_inside_a_transaction_sees_and_is_seen_by_its_other_writes(lake1):
    with lake1.transaction() as txn:
        txn.put("table", "ns", "a", {"properties": {"p": "1"}})
        assert txn.put("table", "ns", "a", {"properties": {"p": "1"}}).action == "unchanged"
        txn.put("table", "ns", "a", {"properties": {"p": "2"}})
    assert lake1.describe_table("ns", "a").properties["p"] == "2"


def test_a_racing_commit_on_the_same_object_conflicts(lake1):
    txn = lake1.transaction()
    txn.put("table", "ns", "t", {"properties": {"k": "mine"}})
    lake1.replace_table("ns", "t", {"properties": {"k": "theirs"}})
    with pytest.raises(CommitConflictError):
        txn.commit()
    assert lake1.describe_table("ns", "t").properties["k"] == "theirs"
