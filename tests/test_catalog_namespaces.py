"""Namespaces through the catalog API."""

from __future__ import annotations

import pytest

from trinityfs.errors import (
    AlreadyExistsError,
    InvalidNameError,
    NamespaceNotEmptyError,
    NamespaceNotFoundError,
)


def test_create_list_describe(lake) -> None:
    assert lake.list_namespaces() == []
    v1 = lake.create_namespace("ns1", {"owner": "me"})
    v2 = lake.create_namespace("a")
    assert (v1, v2) == (1, 2)
    assert lake.list_namespaces() == ["a", "ns1"]
    assert dict(lake.describe_namespace("ns1").properties) == {"owner": "me"}
    assert lake.describe_namespace("ns1").id  # a uuid is assigned
    lake.check()


def test_create_existing_fails(lake) -> None:
    lake.create_namespace("ns")
    with pytest.raises(AlreadyExistsError, match="'ns' already exists"):
        lake.create_namespace("ns")
    assert lake.latest_version() == 1


def test_properties_set_and_unset(lake) -> None:
    lake.create_namespace("ns", {"a": "1", "b": "2"})
    lake.set_namespace_properties("ns", {"c": "3"}, removals=["a"])
    assert dict(lake.describe_namespace("ns").properties) == {"b": "2", "c": "3"}
    assert dict(lake.at(1).describe_namespace("ns").properties) == {"a": "1", "b": "2"}


def test_drop_restrict_and_cascade(lake) -> None:
    lake.create_namespace("ns")
    lake.create_table("ns", "t1")
    lake.create_view("ns", "v1")
    with pytest.raises(NamespaceNotEmptyError, match="not empty"):
        lake.drop_namespace("ns")
    version = lake.latest_version()
    lake.drop_namespace("ns", cascade=True)
    assert lake.list_namespaces() == []
    assert lake.at(version).list_tables("ns") == ["t1"]
    with pytest.raises(NamespaceNotFoundError):
        lake.list_tables("ns")
    lake.check()


def test_drop_missing(lake) -> None:
    with pytest.raises(NamespaceNotFoundError, match="'nope' does not exist"):
        lake.drop_namespace("nope")


@pytest.mark.parametrize(
    ("name", "rule"),
    [("", "empty"), ("has space", "space"), ("tab\tx", "control"), ("x" * 101, "bytes")],
)
def test_invalid_names_name_the_rule(lake, name, rule) -> None:
    with pytest.raises(InvalidNameError, match=rule):
        lake.create_namespace(name)
    assert lake.latest_version() == 0


def test_pagination(lake) -> None:
    with lake.transaction() as txn:
        for i in range(25):
            txn.create_namespace(f"ns{i:02d}")
    page1 = lake.list_namespaces(limit=10)
    page2 = lake.list_namespaces(start_after=page1[-1], limit=10)
    page3 = lake.list_namespaces(start_after=page2[-1], limit=10)
    assert page1 + page2 + page3 == [f"ns{i:02d}" for i in range(25)]
    assert len(page3) == 5
