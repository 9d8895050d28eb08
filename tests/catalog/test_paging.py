"""Paged iteration of namespaces and objects, in one place (`paged`)."""

from __future__ import annotations

from trinityfs.catalog.reader import paged


def test_paged_reads_pages_until_a_short_one():
    calls = []

    def fetch(after, limit):
        calls.append((after, limit))
        items = list(range(10))
        start = 0 if after is None else after + 1
        return items[start : start + limit]

    assert list(paged(fetch, page_size=3)) == list(range(10))
    assert calls == [(None, 3), (2, 3), (5, 3), (8, 3)]
    assert list(paged(fetch, start_after=7, page_size=5)) == [8, 9]


def test_iterating_namespaces_and_objects_in_pages(small_lake):
    lake = small_lake
    with lake.transaction() as t:
        for i in range(25):
            t.create_namespace(f"n{i:02}")
        for i in range(12):
            t.create_table("n00", f"t{i:02}")
            t.create_view("n00", f"u{i:02}")
        t.create_view("n00", "a")
    snap = lake.snapshot()
    assert list(snap.iter_namespaces(page_size=4)) == [f"n{i:02}" for i in range(25)]
    assert list(snap.iter_namespaces("n20", page_size=2)) == ["n21", "n22", "n23", "n24"]
    names = [r.name for r in snap.iter_objects("n00", page_size=5)]
    assert names == sorted(names) and len(names) == 25 and names[0] == "a"
    kinds = {r.name: r.kind for r in snap.iter_objects("n00", page_size=5)}
    assert kinds["t03"] == "table" and kinds["u03"] == "view"
    assert [r.name for r in snap.iter_objects("n00", start_after="u09")] == ["u10", "u11"]
    assert snap.list_objects("n00") == list(snap.iter_objects("n00", page_size=7))
