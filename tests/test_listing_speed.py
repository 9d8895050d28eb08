"""A cold names-only listing of a large namespace (issue 13 item 3): no merge per name
when the namespace holds one kind, no ObjectRef per name for trinity://, location
checks in one regex pass per node column; every answer as before."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trinityfs.catalog.reader as reader_module
from trinityfs import Lakehouse
from trinityfs.catalog.model import ObjectRef
from trinityfs.errors import NamespaceNotFoundError
from trinityfs.format.paths import (
    _SAFE_FAST_LINES_RE,
    all_plainly_safe,
    new_definition_location,
    new_node_location,
    unsafe_location_problem,
)
from trinityfs.fs import TrinityFileSystem


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    with lake.transaction() as txn:
        txn.create_namespace("tables")
        txn.create_namespace("mixed")
        for i in range(30):
            txn.create_table("tables", f"t{i:03d}")
            if i % 3:
                txn.create_table("mixed", f"o{i:03d}")
            else:
                txn.create_view("mixed", f"o{i:03d}", {"properties": {"sql": "select 1"}})
    return lake


def test_object_names_are_the_objects_in_name_order(lake):
    snap = lake.at(lake.latest_version())
    for ns in ("tables", "mixed"):
        refs = snap.list_objects(ns)
        assert list(snap.iter_object_names(ns)) == [(r.name, r.kind) for r in refs]
        assert [r.name for r in refs] == sorted(r.name for r in refs)
    kinds = {kind for _, kind in snap.iter_object_names("mixed")}
    assert kinds == {"table", "view"}
    assert list(snap.iter_object_names("mixed", start_after="o015", page_size=2))[:2] == [
        ("o016", "table"),
        ("o017", "table"),
    ]


@pytest.mark.parametrize("page_size", [1, 2, 7, 1000])
def test_object_name_columns_are_the_object_names_as_two_lists(lake, page_size):
    lake.create_namespace("empty")
    with lake.transaction() as txn:
        txn.create_namespace("views")
        txn.create_view("views", "w", {"properties": {"sql": "select 1"}})
    snap = lake.at(lake.latest_version())
    for ns in ("tables", "mixed", "empty", "views"):
        for after in (None, "o015", "t004", "t029", "zz"):
            pairs = list(snap.iter_object_names(ns, after, page_size))
            names, kinds = snap.object_name_columns(ns, after, page_size)
            assert (names, kinds) == ([n for n, _ in pairs], [k for _, k in pairs]), (ns, after)
    assert snap.object_name_columns("mixed")[1].count("view") == 10
    with pytest.raises(NamespaceNotFoundError):
        snap.object_name_columns("nope")


def test_a_namespace_of_one_kind_is_listed_without_a_merge(lake, monkeypatch):
    snap = lake.at(lake.latest_version())

    def no_merge(*args, **kwargs):
        raise AssertionError("heapq.merge for a namespace holding only tables")

    monkeypatch.setattr(reader_module.heapq, "merge", no_merge)
    assert [r.name for r in snap.list_objects("tables")] == [f"t{i:03d}" for i in range(30)]


def test_trinity_ls_makes_no_object_ref_per_name(lake, monkeypatch):
    fs = TrinityFileSystem(lake.url, skip_instance_cache=True)
    expected = [f"/tables/t{i:03d}" for i in range(30)]

    def no_refs(*args, **kwargs):
        raise AssertionError("an ObjectRef per listed name")

    monkeypatch.setattr(reader_module, "ObjectRef", no_refs)
    assert fs.ls("tables", detail=False) == expected
    mixed = fs.ls("mixed", detail=True)
    assert [(e["name"], e["kind"]) for e in mixed][:3] == [
        ("/mixed/o000", "view"),
        ("/mixed/o001", "table"),
        ("/mixed/o002", "table"),
    ]
    monkeypatch.setattr(reader_module, "ObjectRef", ObjectRef)


@pytest.mark.parametrize(
    ("locations", "safe"),
    [
        (["a/b.binpb", "0101/1010/0001/00011111-table-ns-t-x.binpb"], True),
        (["a"], True),
        ([], False),  # nothing to vouch for: the caller checks (there is nothing)
        (["a", ""], False),
        (["a\nb"], False),  # a newline inside one location is no separator
        (["a\n", "b"], False),
        (["a/", "b"], False),
        (["a//b"], False),
        (["./a"], False),
        (["a/../b"], False),
        (["/a"], False),
        (["s3://b/k"], False),
        (["a b"], False),  # outside the fast subset: checked one by one, then safe
        (["é"], False),
        (["a\x00b"], False),
        (["a/.b"], False),
        (["+a"], False),
        (["a", "@b"], False),
        (["a/", "\nb"], False),
        (["a."], True),
        (["a..b", "c"], True),
        (["a", "/b"], False),
        (["a", ".b"], False),
        (["_a/-b.c=d,e@f+g"], True),
    ],
)
def test_all_plainly_safe_vouches_only_for_safe_lists(locations, safe):
    assert all_plainly_safe(locations) is safe
    if safe:
        assert all(unsafe_location_problem(loc) is None for loc in locations)


_LOCATION_TEXT = st.text(alphabet="ab0_-.+=,@/\n\x00 ~é:", max_size=12)
_NEAR_MISS_TEXT = st.text(alphabet="a./@\n", max_size=5)  # mostly in the subset


@settings(max_examples=1000, deadline=None)
@given(st.lists(_LOCATION_TEXT, max_size=5) | st.lists(_NEAR_MISS_TEXT, max_size=4))
def test_all_plainly_safe_never_vouches_beyond_the_reference(locations):
    """The byte-pass check says what the subset's regex says over the joined list, and
    never vouches for a location the per-location check refuses."""
    vouched = all_plainly_safe(locations)
    reference = bool(locations) and all("\n" not in loc for loc in locations)
    reference = reference and _SAFE_FAST_LINES_RE.fullmatch("\n".join(locations)) is not None
    assert vouched == reference
    if vouched:
        assert all(unsafe_location_problem(loc) is None for loc in locations)


def test_the_writers_own_locations_take_the_fast_check():
    """What trinityfs writes is vouched for in one pass (the cheap path of every node
    decode), names with dots and the other label characters included."""
    names = ["t1", "orders.v2", "a=b,c@d+e", "x_y-z", "t" * 100]
    locations = [new_definition_location("table", "ns.1", name, name.encode()) for name in names]
    locations += [new_node_location(b"node %d" % i) for i in range(5)]
    locations.append(new_definition_location("namespace", "ns", None, b"ns"))
    assert all_plainly_safe(locations)


def test_a_names_only_ls_builds_no_info_dicts(lake):
    fs = TrinityFileSystem(lake.url, skip_instance_cache=True)
    names = fs.ls("tables", detail=False)
    (_, listing) = fs._listings.get("/tables")
    assert listing._entries is None  # paths only
    detailed = fs.ls("tables", detail=True)
    assert [e["name"] for e in detailed] == names
    assert all(e["type"] == "file" and e["kind"] == "table" for e in detailed)
    assert fs.find("/tables") == names


def test_names_needing_escapes_are_encoded_in_a_listing(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for name in ("a%b", "c/d", "plain"):
        lake.create_table("ns", name)
    fs = TrinityFileSystem(lake.url, skip_instance_cache=True)
    assert fs.ls("ns", detail=False) == ["/ns/a%25b", "/ns/c%2Fd", "/ns/plain"]
