"""catalog.ranges.scan_range (parallel catalog reads) decodes a page of keys in bulk:
the same (ref, location) pairs as decoding key by key for every range, a key that is
not an object key still skipped, no decode per plain key."""

from __future__ import annotations

import random

import pytest

import trinityfs.catalog.ranges as ranges
from trinityfs import Lakehouse
from trinityfs.catalog.model import ObjectRef
from trinityfs.format.keys import KeyCodec, ObjectKey
from trinityfs.format.trinitylake_pb2 import TableDef


def _lake(tmp_path, odd: bool) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / ("odd" if odd else "plain")))
    with lake.transaction() as txn:
        for n, ns in enumerate(["a", "b/c", "z*?[]", *(["\u00e9"] if odd else [])]):
            txn.create_namespace(ns)
            for i in range(6 + n):
                txn.create_table(ns, f"t{i}.x")
            txn.create_view(ns, "v%", {})
        if odd:  # a key the catalog would never write: skipped by scan_range
            bad = txn.keys.children_prefix("table", "a") + "t\t" + " " * (txn.keys.table_max - 2)
            txn.txn.put(bad, "some/where.binpb", TableDef().SerializeToString())
    return lake


def _reference(snap, after: ObjectRef | None, until: ObjectRef | None):
    """The pre-bulk scan: every key of the range decoded on its own, bad keys skipped."""
    codec = KeyCodec.from_lakehouse_def(snap.lakehouse_def)

    def key(ref):
        return codec.encode(ObjectKey(ref.kind, ref.namespace, ref.name))

    lo = None if after is None else key(after)
    hi = None if until is None else key(until)
    out = []
    for k, location in snap.snapshot.items():
        if (lo is not None and k <= lo) or (hi is not None and k > hi):
            continue
        try:
            ok = codec.decode(k)
        except Exception:
            continue
        out.append((ObjectRef(ok.namespace, ok.name, ok.kind), location))
    return out


@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("page", [1, 3, 1000])
def test_scan_range_equals_decoding_key_by_key(tmp_path, monkeypatch, odd, page):
    monkeypatch.setattr(ranges, "PAGE_SIZE", page)
    snap = _lake(tmp_path, odd).at()
    refs = [ref for ref, _ in _reference(snap, None, None)]
    rng = random.Random(page * 2 + odd)
    bounds = [(None, None)] + [
        tuple(rng.choice([None, *refs]) for _ in range(2)) for _ in range(40)
    ]
    for after, until in bounds:
        assert list(ranges.scan_range(snap, after, until)) == _reference(snap, after, until)


def test_plain_keys_are_not_decoded_one_at_a_time(tmp_path, monkeypatch):
    snap = _lake(tmp_path, False).at()
    calls = []
    real = KeyCodec.decode
    monkeypatch.setattr(KeyCodec, "decode", lambda self, key: calls.append(key) or real(self, key))
    assert len(list(ranges.scan_range(snap))) == 3 + (6 + 7 + 8) + 3
    assert calls == []


def test_a_range_stops_reading_at_its_end(tmp_path, monkeypatch):
    monkeypatch.setattr(ranges, "PAGE_SIZE", 2)
    snap = _lake(tmp_path, False).at()
    refs = [ref for ref, _ in ranges.scan_range(snap)]
    scans = []
    real = snap._view.scan_prefix
    monkeypatch.setattr(snap._view, "scan_prefix", lambda *a: scans.append(a) or real(*a))
    got = [ref for ref, _ in ranges.scan_range(snap, refs[4], refs[7])]
    assert got == refs[5:8]
    assert len(scans) <= 3, scans
