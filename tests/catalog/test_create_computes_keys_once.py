"""A table or view create computes each object key once (issue 13: creates per second).

It used to compute (and validate the names of) the object key of `namespace.name` four
times and the namespace key twice; the checks and the write now share them. The
refusals stay those of before (taken name, either kind; missing namespace; bad name).
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    InvalidNameError,
    NamespaceNotFoundError,
)
from trinityfs.format.keys import KeyCodec


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    return lake


def test_a_create_computes_each_key_once(lake, monkeypatch):
    """(fails on the old code: 4 object keys and 2 namespace keys)"""
    calls: list[tuple] = []
    object_key, namespace_key = KeyCodec.object_key, KeyCodec.namespace_key

    def counted_object_key(self, kind, namespace, name=None):
        calls.append(("object", kind, namespace, name))
        return object_key(self, kind, namespace, name)

    def counted_namespace_key(self, namespace):
        calls.append(("namespace", namespace))
        return namespace_key(self, namespace)

    monkeypatch.setattr(KeyCodec, "object_key", counted_object_key)
    monkeypatch.setattr(KeyCodec, "namespace_key", counted_namespace_key)
    with lake.transaction() as txn:
        calls.clear()
        txn.create_table("ns", "t")
        assert sorted(calls) == [
            ("namespace", "ns"),
            ("object", "table", "ns", "t"),
            ("object", "view", "ns", "t"),
        ]
    assert lake.describe_table("ns", "t") is not None


@pytest.mark.parametrize("first,second", [("table", "table"), ("table", "view"), ("view", "table")])
def test_a_taken_name_is_refused_whatever_its_kind(lake, first, second):
    getattr(lake, f"create_{first}")("ns", "t")
    with pytest.raises(AlreadyExistsError, match=f"{first} ns.t already exists"):
        getattr(lake, f"create_{second}")("ns", "t")


def test_the_other_refusals_are_unchanged(lake):
    with pytest.raises(NamespaceNotFoundError):
        lake.create_table("missing", "t")
    with pytest.raises(InvalidNameError):
        lake.create_table("ns", "bad name")
    with pytest.raises(InvalidNameError):
        lake.create_table("ns", "x" * 10_000)


def test_a_create_racing_a_create_of_the_other_kind_conflicts(lake):
    """The other kind's key is still required unchanged: a concurrent view of the same
    name makes the table's commit fail, naming the view."""
    txn = lake.transaction()
    txn.create_table("ns", "t")
    lake.create_view("ns", "t")
    with pytest.raises(CommitConflictError, match=r"view 'ns\.t'"):
        txn.commit()
    assert lake.describe_view("ns", "t") is not None
