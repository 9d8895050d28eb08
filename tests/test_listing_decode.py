"""Listing names decodes keys in bulk (issue 13 item 3): the same names as decoding key by
key, and a key the bulk checks cannot vouch for still fails with the precise error."""

from __future__ import annotations

import pytest

from trinityfs.catalog import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.keys import KeyCodec

CODEC = KeyCodec(10, 12, 12)


def _keys(kind: str, namespace: str, names: list[str]) -> list[str]:
    return [CODEC.object_key(kind, namespace, n) for n in names]


@pytest.mark.parametrize("kind", ["table", "view"])
def test_bulk_names_equal_key_by_key_decoding(kind):
    names = ["a", "b.c", "x" * 12, "t-1_2", "Ünï", "名前", "%2F", "[*]?"]
    keys = _keys(kind, "ns", names)
    assert CODEC.decode_names(kind, "ns", keys) == [CODEC.decode(k).name for k in keys]
    assert CODEC.decode_names(kind, "ns", keys) == names
    assert CODEC.decode_names(kind, "ns", []) == []


@pytest.mark.parametrize(
    "bad",
    [
        "C===ns        a b         ",  # a space inside the name
        "C===ns        a\x01          ",  # a control character
        "C===ns                    ",  # an empty name
        "C===ns        abc",  # too short
        "C===ns        abcdefghijklm",  # too long
        "D===ns        abc         ",  # another kind's prefix
        "C===ns        abc\t        ",  # a tab in the padding (str.rstrip() strips it)
        "C===ns        abc \x1c       ",  # an ASCII separator in the padding (likewise)
        "C===ns        abc        \n",  # a line feed ending the key
        "C===ns        \u00e9b        ",  # non-ASCII, padded as if one byte per char
    ],
)
def test_a_bad_key_in_a_listing_fails_like_decode(bad):
    keys = [*_keys("table", "ns", ["ok1", "ok2"]), bad]
    with pytest.raises(InvalidArgumentError) as bulk:
        CODEC.decode_names("table", "ns", keys)
    assert repr(bad) in str(bulk.value)  # the error names the bad key


def test_list_tables_of_a_lakehouse_uses_the_bulk_path(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    with lake.transaction() as txn:
        for i in range(300):
            txn.create_table("ns", f"t{i:04d}")
        txn.create_view("ns", "v", None)
    calls = []
    real = lake.snapshot().keys.decode

    snap = lake.snapshot()
    snap.keys.decode = lambda key: calls.append(key) or real(key)  # type: ignore[method-assign]
    assert snap.list_tables("ns") == [f"t{i:04d}" for i in range(300)]
    assert snap.list_views("ns") == ["v"]
    assert calls == []  # no key decoded one at a time
    assert snap.list_tables("ns", start_after="t0297") == ["t0298", "t0299"]


def test_bulk_namespace_names_equal_key_by_key_decoding():
    names = ["a", "b.c", "x" * 10, "t-1_2", "Ünï", "名前", "%2F", "[*]?"]
    keys = [CODEC.namespace_key(n) for n in names]
    assert CODEC.decode_namespaces(keys) == [CODEC.decode(k).namespace for k in keys] == names
    ascii_keys = keys[:4]
    assert CODEC.decode_namespaces(ascii_keys) == names[:4]
    assert CODEC.decode_namespaces([]) == []


@pytest.mark.parametrize(
    "bad",
    [
        "B===a b       ",  # a space inside the name
        "B===a\x7f        ",  # DEL
        "B===          ",  # an empty name
        "B===abc",  # too short
        "B===abcdefghijk",  # too long
        "C===abc       ",  # a table key's prefix
        "B===abc\t      ",  # a tab in the padding
    ],
)
def test_a_bad_key_in_a_namespace_listing_fails_like_decode(bad):
    keys = [CODEC.namespace_key("ok1"), CODEC.namespace_key("ok2"), bad]
    with pytest.raises(InvalidArgumentError) as bulk:
        CODEC.decode_namespaces(keys)
    assert repr(bad) in str(bulk.value)


def test_list_namespaces_of_a_lakehouse_uses_the_bulk_path(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    with lake.transaction() as txn:
        for i in range(40):
            txn.create_namespace(f"n{i:03d}")
    lake.create_namespace("m")  # in the root's buffer
    lake.drop_namespace("n007")
    snap = lake.snapshot()
    calls = []
    real = snap.keys.decode
    snap.keys.decode = lambda key: calls.append(key) or real(key)  # type: ignore[method-assign]
    expected = sorted(["m", *(f"n{i:03d}" for i in range(40) if i != 7)])
    assert snap.list_namespaces() == expected
    assert snap.list_namespaces(start_after="n005", limit=3) == ["n006", "n008", "n009"]
    assert list(snap.iter_namespaces(page_size=7)) == expected
    assert calls == []  # no key decoded one at a time
