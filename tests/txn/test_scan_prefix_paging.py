"""Transaction.scan_prefix with pending writes: the same pairs as a plain dict model
(read-your-writes, pending deletes hide base keys, pending sets override base values,
`after` exclusive, key order, `limit`), and a page reads about a page of the base, not
the whole prefix (issue 13: paging n keys inside a transaction with pending writes was
O(n) per page)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_workloads import empty_root, new_store

from trinityfs.format.node_encode import encode_node
from trinityfs.format.trinitylake_pb2 import IsolationLevel, LakehouseDef
from trinityfs.tree import TreeWriter
from trinityfs.txn.snapshot import Snapshot
from trinityfs.txn.transaction import Transaction

# names with path metacharacters and non-ASCII; a lone surrogate too where no tree holds
# it (names refuse it, so only a caller's prefix or `after` can carry one)
BASE_ALPHABET = "ab/.*?[]\u00e9\U0001f600"
ALPHABET = BASE_ALPHABET + "\ud800"
base_keys = st.text(alphabet=BASE_ALPHABET, min_size=1, max_size=4)
keys = st.text(alphabet=ALPHABET, min_size=1, max_size=4)


def _ldef(isolation: int = IsolationLevel.SNAPSHOT) -> LakehouseDef:
    ldef = LakehouseDef(
        namespace_name_max_size_bytes=8,
        table_name_max_size_bytes=8,
        view_name_max_size_bytes=8,
    )
    ldef.txn_isolation_level = isolation
    return ldef


def _snapshot(batches: list[dict[str, str | None]], order: int = 4) -> Snapshot:
    """A committed tree built by `batches` (later batches replace and delete keys of
    earlier ones, so nodes hold buffered messages)."""
    store = new_store(order)
    root = empty_root()
    for version, changes in enumerate(batches, start=1):
        root = TreeWriter(store, order, 200, version).commit(root, changes)
        root.system = {"created_at_millis": str(version), "lakehouse_def": "l"}
        store.write_new_nodes(root)
        encode_node(root.to_file(), order)
    return Snapshot(len(batches), root, _ldef(), "l", store)


class Counting:
    """A base view that counts the pairs its scans return."""

    def __init__(self, base: Snapshot):
        self.base = base
        self.lakehouse_def = base.lakehouse_def
        self.read = 0
        self.calls = 0

    def get(self, key: str) -> str | None:
        return self.base.get(key)

    def scan_prefix(self, prefix, after=None, limit=None):
        page = self.base.scan_prefix(prefix, after, limit)
        self.read += len(page)
        self.calls += 1
        return page


def _txn(base, isolation: int = IsolationLevel.SNAPSHOT) -> Transaction:
    return Transaction(None, base, isolation)  # type: ignore[arg-type]  # reads only


def _model(base: dict[str, str], pending: dict[str, str | None], prefix, after):
    merged = dict(base)
    for k, v in pending.items():
        if v is None:
            merged.pop(k, None)
        else:
            merged[k] = v
    return sorted(
        (k, v) for k, v in merged.items() if k.startswith(prefix) and (after is None or k > after)
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.dictionaries(base_keys, st.sampled_from(["x1", "x2"]), max_size=40),
    second=st.dictionaries(base_keys, st.sampled_from([None, "y1"]), max_size=10),
    pending=st.dictionaries(keys, st.sampled_from([None, "p1", "p2"]), max_size=25),
    prefix=st.text(alphabet=ALPHABET, max_size=2),
    after=st.none() | keys,
    limit=st.none() | st.integers(min_value=0, max_value=12),
    page=st.integers(min_value=1, max_value=6),
)
def test_scan_prefix_equals_a_dict_model(first, second, pending, prefix, after, limit, page):
    base = {**first, **second}
    base = {k: v for k, v in base.items() if v is not None}
    txn = _txn(_snapshot([first, second] if second else [first]))
    txn.pending.update(pending)
    expected = _model(base, pending, prefix, after)
    got = txn.scan_prefix(prefix, after, limit)
    assert got == (expected if limit is None else expected[:limit])
    # paged from `after`, each page's last key the next `after`: every pair once
    pages, cursor = [], after
    while True:
        chunk = txn.scan_prefix(prefix, cursor, page)
        pages.extend(chunk)
        if len(chunk) < page:
            break
        cursor = chunk[-1][0]
    assert pages == expected


def test_delete_then_recreate_and_after_a_pending_deleted_key():
    base = {f"t{i:03d}": f"b{i}" for i in range(20)}
    txn = _txn(_snapshot([base]))
    txn.delete("t005")
    txn.pending["t005"] = "again"  # deleted, then created anew in the same transaction
    txn.delete("t006")
    txn.delete("t999")  # deleting what is not there hides nothing
    txn.pending["t0055"] = "new"
    assert txn.scan_prefix("t00", "t004", 3) == [
        ("t005", "again"),
        ("t0055", "new"),
        ("t007", "b7"),
    ]
    assert txn.scan_prefix("t00", "t006", 1) == [("t007", "b7")]  # after a deleted key
    assert txn.scan_prefix("t00", None, 0) == []
    assert txn.scan_prefix("t", "t019", None) == []


@pytest.mark.parametrize("isolation", [IsolationLevel.SNAPSHOT, IsolationLevel.SERIALIZABLE])
def test_a_read_range_is_recorded_once_per_scan_when_serializable(isolation):
    base = {f"t{i:03d}": "b" for i in range(50)}
    txn = _txn(_snapshot([base]), isolation)
    for i in range(0, 50, 2):
        txn.delete(f"t{i:03d}")  # deletions make the scan read more than one base page
    assert len(txn.scan_prefix("t", None, 5)) == 5
    assert len(txn.deps.read_ranges) == (1 if isolation == IsolationLevel.SERIALIZABLE else 0)


@pytest.mark.parametrize("deleted_every", [0, 7, 2])
def test_a_page_reads_about_a_page_of_the_base(deleted_every):
    """Paging 3,000 keys by 100 with pending writes: each page reads at most a few pages
    of the base (the old code re-read the whole remaining prefix on every page:
    ~45x more in all)."""
    n, size = 3000, 100
    snap = _snapshot([{f"t{i:05d}": "b" for i in range(n)}], order=16)
    base = Counting(snap)
    txn = _txn(base)
    txn.put("t00000x", "loc", b"")  # a pending write in the range
    deleted = 0
    if deleted_every:
        for i in range(0, n, deleted_every):
            txn.delete(f"t{i:05d}")
            deleted += 1
    pages, cursor, worst = 0, None, 0
    total = 0
    while True:
        before = base.read
        chunk = txn.scan_prefix("t", cursor, size)
        worst = max(worst, base.read - before)
        total += len(chunk)
        pages += 1
        if len(chunk) < size:
            break
        cursor = chunk[-1][0]
    assert total == n + 1 - deleted
    # a page of `size` results needs `size` + the deletions among them base pairs; the
    # geometric growth of a page that deletions emptied at most doubles that
    assert worst <= 4 * size, worst
    assert base.read <= 4 * (n + pages), base.read


def test_dense_deletions_read_further_pages_once_each():
    """Deletions that empty the first base pages: the scan reads on, applying every
    pending change once (a set met in an earlier page is not laid over a later one)."""
    base = {f"t{i:03d}": f"b{i}" for i in range(40)}
    counting = Counting(_snapshot([base]))
    txn = _txn(counting)
    txn.pending["t000a"] = "new"  # a set in the first page
    for i in range(1, 30):
        txn.delete(f"t{i:03d}")
    expected = [("t000", "b0"), ("t000a", "new")] + [(f"t{i:03d}", f"b{i}") for i in range(30, 40)]
    for limit in (1, 2, 3, 5, 12, 13, 100):
        assert txn.scan_prefix("t", None, limit) == expected[:limit], limit
    assert txn.scan_prefix("t", "t000a", 2) == expected[2:4]
    counting.calls = 0
    txn.scan_prefix("t", "t000", 3)
    assert counting.calls > 1  # the case this test is about: more than one base page


def test_a_long_run_of_deletions_costs_few_base_scans():
    """1,000 consecutive pending deletions before the first live key: a page of one
    reads on in growing pages (a few base scans), not one base scan per deleted key."""
    snap = _snapshot([{f"t{i:05d}": "b" for i in range(1200)}], order=16)
    counting = Counting(snap)
    txn = _txn(counting)
    for i in range(1000):
        txn.delete(f"t{i:05d}")
    assert txn.scan_prefix("t", None, 1) == [("t01000", "b")]
    assert counting.calls <= 12, counting.calls
    assert counting.read <= 4 * 1001, counting.read
