"""scan_list (a listing page built a leaf slice at a time, issue 13 item 3) returns
exactly what the generator scan does, for every bound and limit, over trees whose
nodes hold buffered inserts, replacements and deletes at every level."""

from __future__ import annotations

import random

import pytest

import trinityfs.tree.reader as reader
from tests.test_tree import commit, empty_root, new_store
from trinityfs.tree import scan
from trinityfs.tree.reader import prefix_range, scan_list
from trinityfs.txn.snapshot import Snapshot


def _random_tree(order: int, budget: int, seed: int):
    rng = random.Random(seed)
    store = new_store(order)
    root = empty_root()
    for version in range(1, 60):
        changes = {}
        for _ in range(rng.choice([1, 3, 10, 60])):
            key = f"k{rng.randrange(400):04d}"
            changes[key] = None if rng.random() < 0.3 else f"v{version}-{key}"
        root = commit(store, root, changes, version, budget)
    return store, root, rng


@pytest.mark.parametrize(("order", "budget"), [(3, 150), (4, 200), (16, 2_000), (128, 4_000)])
def test_scan_list_equals_the_generator_scan(order, budget):
    store, root, rng = _random_tree(order, budget, order * 7 + budget)
    assert root.buffer  # the merge over buffered messages is exercised
    bounds = [("", None), ("k0100", "k0300"), ("k02", "k03"), ("k0399", None), ("z", None)]
    bounds += [(f"k{rng.randrange(400):04d}", f"k{rng.randrange(400):04d}") for _ in range(20)]
    for lo, hi in bounds:
        expected = list(scan(store, root, lo, hi))
        for limit in (None, 0, 1, 2, 7, 50, 1000):
            got = scan_list(store, root, lo, hi, limit)
            assert got == expected[:limit] if limit is not None else got == expected, (
                lo,
                hi,
                limit,
            )


def test_pages_through_scan_list_cover_the_range_once():
    store, root, _ = _random_tree(4, 200, 5)
    expected = list(scan(store, root, *prefix_range("k01")))
    pages, after = [], None
    while True:
        page = scan_list(store, root, *prefix_range("k01", after), 7)
        pages.extend(page)
        if len(page) < 7:
            break
        after = page[-1][0]
    assert pages == expected


def test_snapshot_pages_use_the_list_scan(monkeypatch):
    store, root, _ = _random_tree(16, 2_000, 9)
    snap = Snapshot(1, root, None, "ldef", store)  # type: ignore[arg-type]
    expected = list(scan(store, root, "k", "l"))[:100]

    steps = []
    real = reader._scan

    def counting(*args, **kwargs):
        steps.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reader, "_scan", counting)
    assert snap.scan_prefix("k", None, 100) == expected
    assert steps == []  # no generator step per key per level
