"""CatalogReader.iter_all (find, du, fsck walk it) decodes a page of keys in bulk
(KeyCodec.bulk_decode): the same refs as decoding key by key, and a malformed key still
raises decode's typed error, after the pairs before it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trinityfs.catalog.reader as catalog_reader
from trinityfs import Lakehouse
from trinityfs.catalog.model import ObjectRef
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.keys import KeyCodec

NS_MAX, NAME_MAX = 8, 6
CODEC = KeyCodec(NS_MAX, NAME_MAX, NAME_MAX)


def _one_by_one(view) -> list[tuple[ObjectRef, str]]:
    """The reference: every object key of the version through KeyCodec.decode."""
    codec = KeyCodec.from_lakehouse_def(view.lakehouse_def)
    out = []
    for kind in ("namespace", "table", "view"):
        for key, location in view.snapshot.scan_prefix(codec.kind_prefix(kind)):
            ok = codec.decode(key)
            out.append((ObjectRef(ok.namespace, ok.name, ok.kind), location))
    return out


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.transaction() as txn:
        for ns in ("a", "b/c", "\u00e9", "z*?[]"):
            txn.create_namespace(ns)
            for i in range(7):
                txn.create_table(ns, f"t{i}.x")
            txn.create_view(ns, "v%", {})
    return lake


@pytest.mark.parametrize("page", [1, 2, 3, 1000])
def test_iter_all_equals_decoding_key_by_key(lake, monkeypatch, page):
    monkeypatch.setattr(catalog_reader, "PAGE_SIZE", page)
    snap = lake.snapshot()
    assert list(snap.iter_all()) == _one_by_one(snap)
    assert len(_one_by_one(snap)) == 4 + 4 * 8


def test_plain_keys_are_not_decoded_one_at_a_time(tmp_path, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "plain"))
    with lake.transaction() as txn:
        for ns in ("a", "b/c", "z*?[]"):
            txn.create_namespace(ns)
            for i in range(5):
                txn.create_table(ns, f"t{i}.x")
            txn.create_view(ns, "v%", {})
    calls = []
    real = KeyCodec.decode
    monkeypatch.setattr(KeyCodec, "decode", lambda self, key: calls.append(key) or real(self, key))
    assert len(list(lake.snapshot().iter_all())) == 3 + 3 * 6
    assert calls == []


def test_a_malformed_key_raises_decodes_error_after_the_pairs_before_it(lake):
    with lake.transaction() as txn:
        codec = txn.keys
        bad = codec.children_prefix("table", "a") + "t\t" + " " * (codec.table_max - 2)
        txn.txn.put(bad, "some/location.binpb", b"")
    snap = lake.snapshot()
    with pytest.raises(InvalidArgumentError) as expected:
        codec.decode(bad)
    got = []
    with pytest.raises(InvalidArgumentError) as raised:
        for item in snap.iter_all():
            got.append(item)
    assert str(raised.value) == str(expected.value)
    reference = _one_by_one_until(snap, bad)
    assert got == reference


def _one_by_one_until(view, bad: str) -> list[tuple[ObjectRef, str]]:
    codec = KeyCodec.from_lakehouse_def(view.lakehouse_def)
    out = []
    for kind in ("namespace", "table", "view"):
        for key, location in view.snapshot.scan_prefix(codec.kind_prefix(kind)):
            if key == bad:
                return out
            ok = codec.decode(key)
            out.append((ObjectRef(ok.namespace, ok.name, ok.kind), location))
    raise AssertionError("the bad key was not scanned")


# key fields of any characters: valid, padding, forbidden, non-ASCII
field = st.text(alphabet="ab. \t\x7f\u00e9\x1f", max_size=NS_MAX + 2)
MODES = ("proper", "fields", "free", "other kind", "longer", "shorter")


def _key(kind: str, mode: str, ns: str, name: str) -> str | None:
    body_kind = kind
    if mode == "other kind":  # a well-sized key of another kind in the list
        body_kind = {"namespace": "table", "table": "view", "view": "namespace"}[kind]
    if mode == "proper":
        ns = "".join(ch for ch in ns if ch.isascii() and ch > " " and ch != "\x7f") or "n"
        name = "".join(ch for ch in name if ch.isascii() and ch > " " and ch != "\x7f") or "m"
        return CODEC.object_key(kind, ns[:NS_MAX], None if kind == "namespace" else name[:NAME_MAX])
    if mode == "free":
        return CODEC.kind_prefix(kind) + ns + ("" if kind == "namespace" else name)
    if mode in ("longer", "shorter"):  # a proper key one character off its size
        key = _key(kind, "proper", ns, name)
        return key + "a" if mode == "longer" else key[:-1]
    # exact field sizes in characters: empty, space-only or forbidden fields are likely
    key = CODEC.kind_prefix(body_kind) + (ns + " " * NS_MAX)[:NS_MAX]
    return key if body_kind == "namespace" else key + (name + " " * NAME_MAX)[:NAME_MAX]


@settings(max_examples=1500, deadline=None)
@given(
    kind=st.sampled_from(["namespace", "table", "view"]),
    raw=st.lists(st.tuples(st.sampled_from(MODES), field, field), max_size=5),
)
def test_bulk_decode_vouches_only_for_keys_decode_accepts(kind, raw):
    keys = [_key(kind, *item) for item in raw]
    columns = CODEC.bulk_decode(kind, keys)
    decoded = []
    for key in keys:
        try:
            ok = CODEC.decode(key)
        except InvalidArgumentError:
            ok = None
        if ok is None or ok.kind != kind:
            assert columns is None, key  # bulk never vouches for a key decode refuses
            return
        decoded.append((ok.namespace, ok.name))
    if columns is not None:
        assert list(zip(*columns, strict=True)) == decoded
    elif all(k.isascii() for k in keys):
        # ASCII keys that decode fine are decoded in bulk unless a name holds whitespace
        # str.rstrip() would strip (left to decode for its precise answer)
        assert any(ch in k for k in keys for ch in "\t\x1f"), keys


def _fields(kind: str, ns: str, name: str) -> str:
    key = CODEC.kind_prefix(kind) + (ns + " " * NS_MAX)[:NS_MAX]
    return key if kind == "namespace" else key + (name + " " * NAME_MAX)[:NAME_MAX]


@pytest.mark.parametrize("kind", ["namespace", "table", "view"])
@pytest.mark.parametrize(
    ("ns", "name", "other"),
    [
        ("", "t", ""),  # empty namespace
        ("a\x7f", "t", ""),  # forbidden character in the namespace
        ("a b", "t", ""),  # a space inside the namespace
        ("a\t", "t", ""),  # padding other than spaces
        ("a", "", ""),  # empty name
        ("a", "t\x7f", ""),  # forbidden character in the name
        ("a", "t u", ""),  # a space inside the name
        ("a", "t\x1f", ""),  # padding other than spaces
        ("a", "t", "+"),  # one character too long
        ("a", "t", "-"),  # one character too short
    ],
)
def test_bulk_decode_refuses_each_kind_of_malformed_key(kind, ns, name, other):
    if kind == "namespace" and ns == "a" and not other:
        pytest.skip("a namespace key has no name field")
    good = _fields(kind, "ok", "fine")
    bad = _fields(kind, ns, name)
    bad = bad + "a" if other == "+" else bad[:-1] if other == "-" else bad
    with pytest.raises(InvalidArgumentError):
        CODEC.decode(bad)
    assert CODEC.bulk_decode(kind, [good, bad, good]) is None
    assert CODEC.bulk_decode(kind, [good, good]) is not None


def test_bulk_decode_refuses_a_key_of_another_kind():
    table, view = _fields("table", "ok", "t"), _fields("view", "ok", "t")
    assert len(table) == len(view)
    assert CODEC.bulk_decode("table", [table, view]) is None
    assert CODEC.bulk_decode("view", [view, table]) is None
    assert CODEC.bulk_decode("table", [table]) == (["ok"], ["t"])
