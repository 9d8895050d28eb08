"""A transaction's pending keys are sorted once per change of the key set, not on every
page of a prefix scan (issue 13: paging through a transaction with 100k pending writes
sorted all of them again on every page, ~70 ms a page), and the kept order never goes
stale whichever dict operation changed the keys."""

from __future__ import annotations

import builtins

from hypothesis import given, settings
from hypothesis import strategies as st
from test_scan_prefix_paging import ALPHABET, _snapshot, _txn, keys

import trinityfs.txn.pending as pending_module
import trinityfs.txn.transaction as transaction_module
from trinityfs.txn.pending import PendingWrites


class SortCounter:
    """Counts the items every `sorted` call in the spied modules sorts."""

    def __init__(self, monkeypatch) -> None:
        self.items = 0
        for module in (transaction_module, pending_module):
            monkeypatch.setattr(module, "sorted", self, raising=False)

    def __call__(self, iterable, **kwargs):
        out = builtins.sorted(iterable, **kwargs)
        self.items += len(out)
        return out


def test_paging_a_large_transaction_sorts_its_pending_keys_once(monkeypatch):
    n, size = 4000, 100
    txn = _txn(_snapshot([{f"t{i:05d}": "b" for i in range(0, n, 2)}], order=16))
    for i in range(1, n, 2):
        txn.put(f"t{i:05d}", f"loc{i}", b"")
    sorts = SortCounter(monkeypatch)
    got, cursor = [], None
    while True:
        page = txn.scan_prefix("t", cursor, size)
        got.extend(page)
        if len(page) < size:
            break
        cursor = page[-1][0]
    assert [k for k, _ in got] == [f"t{i:05d}" for i in range(n)]
    # 40 pages; sorting the 2,000 pending keys again on each would be 80,000 items
    assert sorts.items == n // 2, sorts.items

    txn.put("t00001", "again", b"")  # a new value for a pending key: the order holds
    assert txn.scan_prefix("t00001", None, 1) == [("t00001", "again")]
    assert sorts.items == n // 2
    txn.put("t99999", "new", b"")  # a new key: sorted again, once
    assert txn.scan_prefix("t9", None, 5) == [("t99999", "new")]
    assert sorts.items == n // 2 + n // 2 + 1


operations = st.lists(
    st.one_of(
        st.tuples(st.just("set"), keys, st.sampled_from([None, "a", "b"])),
        st.tuples(st.just("del"), keys),
        st.tuples(st.just("pop"), keys),
        st.tuples(st.just("setdefault"), keys),
        st.tuples(st.just("update"), st.dictionaries(keys, st.sampled_from([None, "c"]))),
        st.tuples(st.just("ior"), st.dictionaries(keys, st.sampled_from([None, "d"]))),
        st.tuples(st.just("popitem")),
        st.tuples(st.just("clear")),
        st.tuples(st.just("scan"), st.text(alphabet=ALPHABET, max_size=2), st.none() | keys),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_the_kept_order_matches_a_plain_dict_after_any_operation(ops):
    pending, model = PendingWrites(), {}
    for op, *args in ops:
        for target in (pending, model):
            if op == "set":
                target[args[0]] = args[1]
            elif op == "del" and args[0] in target:
                del target[args[0]]
            elif op == "pop":
                target.pop(args[0], None)
            elif op == "setdefault":
                target.setdefault(args[0], "s")
            elif op == "update":
                target.update(args[0])
            elif op == "ior":
                target |= args[0]
            elif op == "popitem" and target:
                target.popitem()
            elif op == "clear":
                target.clear()
        if op == "scan":
            prefix, after = args
            expected = builtins.sorted(
                (k, v)
                for k, v in model.items()
                if k.startswith(prefix) and (after is None or k > after)
            )
            assert list(pending.in_prefix(prefix, after)) == expected
        assert dict(pending) == model
