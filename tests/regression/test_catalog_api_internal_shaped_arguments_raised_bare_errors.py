"""Catalog API methods that take values a listing gave (a ref and its location, a page
size, a bulk load's namespace) raised AttributeError, TypeError or a plain ValueError for a
value of the wrong shape: front ends map only TrinityError. Now each is a typed error
naming the value."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError, InvalidNameError


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    return lake


@pytest.mark.parametrize("ref", ["ns.t", None, ("ns", "t", "table"), 7])
def test_read_definition_of_something_not_a_listed_ref(lake, ref):
    with pytest.raises(InvalidArgumentError, match=r"read_definition takes a \(ref, location\)"):
        lake.at().read_definition(ref, "x")


def test_read_definition_with_a_location_not_a_str(lake):
    snap = lake.at()
    ref = next(r for r, _ in snap.iter_all() if r.name == "t")
    with pytest.raises(InvalidArgumentError, match=r"not \(ObjectRef, bytes\)"):
        snap.read_definition(ref, b"x")


@pytest.mark.parametrize("page_size", ["10", 0, -1, 2.5, True, None])
def test_a_page_size_not_a_whole_number_at_least_one(lake, page_size):
    with pytest.raises(InvalidArgumentError, match="page_size must be a whole number >= 1"):
        lake.at().object_name_columns("ns", page_size=page_size)


@pytest.mark.parametrize("namespace", [[], {}, bytearray(b"ns"), ("ns",)])
def test_a_bulk_load_namespace_not_a_str(lake, namespace):
    load = lake.bulk_load()
    try:
        with pytest.raises(InvalidNameError, match="a namespace name is a str"):
            load.create_table(namespace, "t2")
    finally:
        load.abort()
