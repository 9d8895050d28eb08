from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinityfs.errors import InvalidArgumentError, InvalidNameError
from trinityfs.format import new_lakehouse_def
from trinityfs.format.keys import (
    SYSTEM_KEYS,
    TYPE_LAKEHOUSE,
    TYPE_NAMESPACE,
    TYPE_TABLE,
    TYPE_TRANSACTION,
    TYPE_VIEW,
    KeyCodec,
    ObjectKey,
    decode_type_id,
    encode_type_id,
)


def test_type_ids():
    assert (TYPE_LAKEHOUSE, TYPE_NAMESPACE, TYPE_TABLE, TYPE_VIEW, TYPE_TRANSACTION) == (
        0,
        1,
        2,
        3,
        4,
    )
    assert [encode_type_id(i) for i in range(5)] == ["A===", "B===", "C===", "D===", "E==="]
    assert all(decode_type_id(encode_type_id(i)) == i for i in range(64))


@pytest.mark.parametrize("bad", [-1, 64, 1000, True, "1", None])
def test_encode_type_id_rejects(bad):
    with pytest.raises(InvalidArgumentError):
        encode_type_id(bad)


@pytest.mark.parametrize("bad", ["", "B", "B==", "B====", "BA==", "-===", "=B==", None, 1])
def test_decode_type_id_rejects(bad):
    with pytest.raises(InvalidArgumentError):
        decode_type_id(bad)


def test_system_keys():
    assert SYSTEM_KEYS == (
        "lakehouse_def",
        "previous_root",
        "rollback_from_root",
        "created_at_millis",
        "n_keys",
    )


CODEC = KeyCodec(8, 6, 5)


def test_keys_are_padded_in_bytes():
    assert CODEC.namespace_key("ns") == "B===ns      "
    assert CODEC.table_key("ns", "t") == "C===ns      t     "
    assert CODEC.view_key("ns", "v") == "D===ns      v    "
    assert CODEC.namespace_key("日本") == "B===日本  "
    assert len(CODEC.table_key("日本", "é").encode()) == 4 + 8 + 6


def test_object_key_and_encode_agree():
    assert CODEC.object_key("namespace", "ns") == CODEC.namespace_key("ns")
    assert CODEC.object_key("table", "ns", "t") == CODEC.table_key("ns", "t")
    assert CODEC.object_key("view", "ns", "v") == CODEC.view_key("ns", "v")
    assert CODEC.encode(ObjectKey("table", "ns", "t")) == CODEC.table_key("ns", "t")


def test_names_are_validated_against_their_own_max():
    CODEC.table_key("ns", "x" * 6)
    with pytest.raises(InvalidNameError, match="table name"):
        CODEC.table_key("ns", "x" * 7)
    with pytest.raises(InvalidNameError, match="view name"):
        CODEC.view_key("ns", "x" * 6)
    with pytest.raises(InvalidNameError, match="namespace name"):
        CODEC.namespace_key("x" * 9)
    with pytest.raises(InvalidNameError, match="space"):
        CODEC.table_key("a b", "t")


def test_prefixes():
    assert CODEC.kind_prefix("namespace") == "B==="
    assert KeyCodec.kind_prefix("table") == "C==="
    assert CODEC.kind_prefix("view") == "D==="
    assert CODEC.children_prefix("table", "ns") == "C===ns      "
    assert CODEC.children_prefix("view", "ns") == "D===ns      "
    assert CODEC.table_key("ns", "abc").startswith(CODEC.children_prefix("table", "ns"))
    # a namespace whose name extends another's does not share its children prefix
    assert not CODEC.table_key("ns1", "t").startswith(CODEC.children_prefix("table", "ns"))
    with pytest.raises(InvalidArgumentError):
        CODEC.children_prefix("namespace", "ns")
    with pytest.raises(InvalidArgumentError):
        CODEC.kind_prefix("lakehouse")


def test_object_key_dataclass_checks_shape():
    with pytest.raises(InvalidArgumentError):
        ObjectKey("namespace", "ns", "t")
    with pytest.raises(InvalidArgumentError):
        ObjectKey("table", "ns")
    with pytest.raises(InvalidArgumentError):
        ObjectKey("transaction", "ns", "t")
    key = ObjectKey("table", "ns", "t")
    with pytest.raises(AttributeError):
        key.name = "u"  # type: ignore[misc]
    assert {key, ObjectKey("table", "ns", "t")} == {key}


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "lakehouse_def",
        "n_keys",
        "A===ns      ",  # lakehouse type id
        "E===ns      ",  # transaction type id
        "B===ns",  # too short
        "B===ns       ",  # too long
        "C===ns      ",  # table key without the table part
        "B=== ns     ",  # leading space
        "B===        ",  # empty name
        "B===a b     ",  # inner space
        "C===ns      \x01     ",  # control character in the name
        "B===ns\udc80     ",  # not UTF-8
        None,
        b"B===ns      ",
    ],
)
def test_decode_rejects(bad):
    with pytest.raises(InvalidArgumentError):
        CODEC.decode(bad)


def test_decode_rejects_a_character_split_by_the_field_boundary():
    codec = KeyCodec(2, 2, 2)
    # "aé" is 3 bytes: the namespace field would end inside the é
    with pytest.raises(InvalidArgumentError):
        codec.decode("C===aé ")


def test_from_lakehouse_def():
    ldef = new_lakehouse_def(
        namespace_name_max_size_bytes=10, table_name_max_size_bytes=20, view_name_max_size_bytes=30
    )
    assert KeyCodec.from_lakehouse_def(ldef) == KeyCodec(10, 20, 30)


@pytest.mark.parametrize("bad", [(0, 1, 1), (1, -1, 1), (1, 1, True), (1, 1, "1")])
def test_codec_rejects_bad_limits(bad):
    with pytest.raises(InvalidArgumentError):
        KeyCodec(*bad)


_name = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), min_codepoint=0x21).filter(
        lambda c: c != "\x7f"
    ),
    min_size=1,
    max_size=4,
)
_kind = st.sampled_from(["namespace", "table", "view"])


@given(_kind, _name, _name)
def test_round_trip(kind, ns, name):
    codec = KeyCodec(16, 16, 16)
    obj = ObjectKey(kind, ns, None if kind == "namespace" else name)
    key = codec.encode(obj)
    assert codec.decode(key) == obj


@given(st.lists(st.tuples(_name, _name), min_size=2, max_size=8))
def test_key_order_matches_name_order(pairs):
    codec = KeyCodec(16, 16, 16)
    keys = [codec.table_key(ns, t) for ns, t in pairs]
    by_name = sorted(pairs, key=lambda p: (p[0].encode(), p[1].encode()))
    assert sorted(keys) == [codec.table_key(ns, t) for ns, t in by_name]
    # str order is UTF-8 byte order
    assert sorted(keys) == sorted(keys, key=lambda k: k.encode())


def test_the_lakehouse_def_key_is_spelled_only_in_format_keys():
    """The system key of the lakehouse definition was a raw "lakehouse_def" in seven
    modules: every use site names format.keys.KEY_LAKEHOUSE_DEF (front ends through the
    catalog API: catalog.model.LAKEHOUSE_DEF_KEY). The one other such string is
    lifecycle/inventory.py's file-kind label LAKEHOUSE_DEF (a word in fsck and
    expiration reports, not a tree key)."""
    import ast
    from pathlib import Path

    from trinityfs.format.keys import KEY_LAKEHOUSE_DEF

    package = Path(__file__).resolve().parents[1] / "trinityfs"
    allowed = {("format/keys.py", 1), ("lifecycle/inventory.py", 1)}  # (file, count)
    found = {}
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value == KEY_LAKEHOUSE_DEF
        ]
        if hits:
            found[str(path.relative_to(package))] = hits
    assert {(name, len(lines)) for name, lines in found.items()} <= allowed, found


def test_object_keys_remembered_answers_are_copies_and_bounded(monkeypatch):
    import trinityfs.format.keys as keys_module

    codec = KeyCodec(8, 6, 5)
    codec.object_keys("ns", "tab")
    assert not codec._object_keys  # only asked to remember by lookups
    first = codec.object_keys("ns", "tab", remember=True)
    assert first == {"table": codec.table_key("ns", "tab"), "view": codec.view_key("ns", "tab")}
    first["table"] = "changed by the caller"
    assert codec.object_keys("ns", "tab", remember=True)["table"] == codec.table_key("ns", "tab")
    # a name only one kind can have is remembered as that kind alone
    assert set(codec.object_keys("ns", "sixsix", remember=True)) == {"table"}
    assert set(codec.object_keys("ns", "sixsix", remember=True)) == {"table"}
    # refusals are not remembered: each call raises
    for _ in range(2):
        with pytest.raises(InvalidNameError):
            codec.object_keys("ns", "sevenchars", remember=True)
    monkeypatch.setattr(keys_module, "OBJECT_KEYS_MEMO", 3)
    for i in range(10):
        keys = codec.object_keys("ns", f"t{i}", remember=True)
        assert keys["view"] == codec.view_key("ns", f"t{i}")
    assert len(codec._object_keys) <= 3
