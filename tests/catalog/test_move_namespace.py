"""`move_namespace`: a rename that keeps the namespace's id and properties and its
objects' ids and definitions (fs.mv and the FUSE mount diverged on this)."""

from __future__ import annotations

import pytest

from trinityfs.errors import AlreadyExistsError, InvalidNameError, NamespaceNotFoundError


@pytest.fixture
def lake2(lake):
    lake.create_namespace("src", {"owner": "ann"})
    lake.create_table("src", "t1", {"properties": {"a": "1"}})
    lake.create_view("src", "v1", {"properties": {"b": "2"}})
    return lake


def _ids(lake, ns):
    return {
        ref.name: lake.snapshot().describe(ref.kind, ns, ref.name).id
        for ref in lake.snapshot().list_objects(ns)
    }


def test_move_keeps_ids_properties_and_definitions(lake2):
    ns_id = lake2.describe_namespace("src").id
    ids = _ids(lake2, "src")
    version = lake2.move_namespace("src", "dst")
    assert version == lake2.latest_version() == 4  # one commit
    assert lake2.list_namespaces() == ["dst"]
    moved = lake2.describe_namespace("dst")
    assert moved.id == ns_id and dict(moved.properties) == {"owner": "ann"}
    assert _ids(lake2, "dst") == ids
    assert lake2.describe_table("dst", "t1").properties["a"] == "1"
    assert lake2.describe_view("dst", "v1").properties["b"] == "2"
    assert [c.action for c in lake2.changes(version)].count("dropped") == 3


def test_moving_onto_an_existing_namespace_needs_merge(lake2):
    lake2.create_namespace("dst", {"owner": "bob"})
    dst_id = lake2.describe_namespace("dst").id
    with pytest.raises(AlreadyExistsError, match="'dst' already exists"):
        lake2.move_namespace("src", "dst")
    lake2.move_namespace("src", "dst", merge=True)
    kept = lake2.describe_namespace("dst")
    assert kept.id == dst_id and kept.properties["owner"] == "bob"
    assert lake2.list_tables("dst") == ["t1"] and lake2.list_views("dst") == ["v1"]


def test_object_clashes_need_replace(lake2):
    lake2.create_namespace("dst")
    lake2.create_table("dst", "v1")
    with pytest.raises(AlreadyExistsError, match=r"table dst\.v1 already exists"):
        lake2.move_namespace("src", "dst", merge=True)
    assert lake2.list_namespaces() == ["dst", "src"]  # nothing committed
    ids = _ids(lake2, "src")
    lake2.move_namespace("src", "dst", merge=True, replace=True)
    assert _ids(lake2, "dst") == ids  # the view replaced the table, keeping its own id


def test_errors(lake2):
    with pytest.raises(NamespaceNotFoundError):
        lake2.move_namespace("missing", "x")
    with pytest.raises(InvalidNameError):
        lake2.move_namespace("src", "..")
    with pytest.raises(InvalidNameError):
        lake2.move_namespace("src", "bad name")
    assert lake2.move_namespace("src", "src") == lake2.latest_version()
    assert lake2.list_namespaces() == ["src"]


def test_a_racing_create_in_the_source_conflicts(lake2):
    from trinityfs.errors import CommitConflictError

    txn = lake2.transaction()
    txn.move_namespace("src", "dst")
    lake2.create_table("src", "late")
    with pytest.raises(CommitConflictError):
        txn.commit()
    assert "late" in lake2.list_tables("src")
