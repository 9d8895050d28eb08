"""Paging while other writers commit: a snapshot pages exactly its own version, and a
transaction pages its base version with its own pending writes laid over it (issue 13:
the paged merge of Transaction.scan_prefix reads its base a page at a time)."""

from __future__ import annotations

import random

from trinityfs import Lakehouse


def _lake(tmp_path, names: list[str]) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.transaction() as txn:
        txn.create_namespace("ns")
        for name in names:
            txn.create_table("ns", name)
    return lake


def _churn(other: Lakehouse, rng: random.Random, present: set[str]) -> None:
    """One commit by another writer: a create or a drop somewhere in the range."""
    if present and rng.random() < 0.5:
        name = rng.choice(sorted(present))
        other.drop_table("ns", name)
        present.discard(name)
    else:
        name = f"t{rng.randrange(200):03d}c"
        if name not in present:
            other.create_table("ns", name)
            present.add(name)


def test_a_snapshot_pages_one_version_while_others_commit(tmp_path):
    names = [f"t{i:03d}" for i in range(0, 200, 3)]
    lake = _lake(tmp_path, names)
    other = Lakehouse.open(str(tmp_path / "lake"))
    snap = lake.snapshot()
    rng, present = random.Random(5), set(names)
    got = []
    for name in snap.iter_names("table", "ns", page_size=4):
        got.append(name)
        if len(got) % 4 == 0:
            _churn(other, rng, present)
    assert got == names
    assert lake.latest_version() > snap.version + 5


def test_a_transaction_pages_its_base_and_own_writes_while_others_commit(tmp_path):
    names = [f"t{i:03d}" for i in range(0, 200, 3)]
    lake = _lake(tmp_path, names)
    other = Lakehouse.open(str(tmp_path / "lake"))
    txn = lake.transaction()
    txn.drop_table("ns", "t003")
    txn.drop_table("ns", "t006")
    txn.create_table("ns", "t003")  # dropped, then created again: listed once
    txn.create_table("ns", "t100x")
    expected = sorted((set(names) - {"t006"}) | {"t100x"})
    rng, present = random.Random(7), set(names)
    for page in (1, 2, 5):
        got = []
        for name in txn.iter_names("table", "ns", page_size=page):
            got.append(name)
            if len(got) % 3 == 0:
                _churn(other, rng, present)
        assert got == expected, page
    assert txn.list_tables("ns", start_after="t006", limit=2) == ["t009", "t012"]
    assert txn.list_tables("ns", start_after="t099", limit=1) == ["t100x"]
    txn.abort()
