"""The encoder's memo of checked key tables and buffers (trinityfs/format/node_encode.py):
every commit's root repeats the previous root's key table and buffer, so inputs made of
the same objects are not checked twice. Same bytes as without the memo, and anything
that differs (other objects, in place changes, look-alikes) is still checked."""

from __future__ import annotations

import pytest

from trinityfs.errors import InvalidArgumentError
from trinityfs.format import node_encode, nodefile
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import NodeFile

ORDER = 8
DEF = "0000/1111/0000/11110000-table-ns-t-{}.binpb"


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch):
    monkeypatch.setattr(node_encode, "_checked_tables", ())
    monkeypatch.setattr(node_encode, "_checked_buffers", ())
    monkeypatch.setattr(node_encode, "_checked_messages", {})
    monkeypatch.setattr(node_encode, "_table_segments", ())
    monkeypatch.setattr(node_encode, "_buffer_segments", (), raising=False)
    monkeypatch.setattr(node_encode, "_bodies", (), raising=False)


def _root(buffer: list, keys=None, values=None, children=None) -> NodeFile:
    keys = ["C===ns  b   ", "C===ns  m   "] if keys is None else keys
    return NodeFile(
        system={"lakehouse_def": "_lakehouse_def_a.binpb", "created_at_millis": "17"},
        keys=keys,
        values=[DEF.format("b"), DEF.format("m")] if values is None else values,
        children=["n/0.arrow", "n/1.arrow", "n/2.arrow"] if children is None else children,
        buffer=buffer,
    )


def _messages(n: int, first_version: int = 1) -> list[tuple]:
    return [(f"C===ns  t{i:<3}", DEF.format(i), first_version + i) for i in range(n)]


def _unmemoized(node: NodeFile, compression: str | None = "zstd") -> bytes:
    names = (
        "_checked_tables",
        "_checked_buffers",
        "_checked_messages",
        "_table_segments",
        "_buffer_segments",
        "_bodies",
    )
    saved = [getattr(node_encode, name, ()) for name in names]
    for name, empty in zip(names, ((), (), {}, (), (), ()), strict=True):
        setattr(node_encode, name, empty)
    try:
        return encode_node(node, ORDER, compression=compression)
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(node_encode, name, value)


def _copy(node: NodeFile, buffer: list | None = None) -> NodeFile:
    """What Node.to_file gives each commit: new lists and tuples, the same strs and ints."""
    return NodeFile(
        system=dict(node.system),
        keys=list(node.keys),
        values=list(node.values),
        children=None if node.children is None else list(node.children),
        buffer=[tuple(m) for m in node.buffer] if buffer is None else buffer,
    )


def test_a_growing_root_encodes_to_the_same_bytes_as_without_the_memo():
    messages = _messages(12)
    node = _root(messages[:1])
    for n in range(1, 13):
        node = _copy(node, [tuple(m) for m in messages[:n]])
        node.system["created_at_millis"] = str(17 + n)
        for compression in ("zstd", None):
            data = encode_node(node, ORDER, compression=compression)
            assert data == _unmemoized(node, compression)
            decoded = decode_node(data, ORDER, "x.arrow")
            assert decoded.buffer == messages[:n]
            assert decoded.keys == node.keys and decoded.children == node.children


def _spy_on_checks(monkeypatch) -> list[list]:
    """The values the encoder checks from now on, one list per check."""
    checked: list[list] = []
    real = nodefile.all_plainly_safe

    def spy(values):
        checked.append(list(values))
        return real(values)

    monkeypatch.setattr(nodefile, "all_plainly_safe", spy)
    monkeypatch.setattr(node_encode, "all_plainly_safe", spy)
    return checked


def test_only_the_new_messages_are_checked(monkeypatch):
    messages = _messages(10)
    node = _root(messages[:9])
    encode_node(node, ORDER)
    checked = _spy_on_checks(monkeypatch)
    encode_node(_copy(node, [tuple(m) for m in messages]), ORDER)
    # the old encoder checked all 10 values of the buffer again
    assert checked == [[messages[9][1]]]


def test_a_message_moved_to_the_end_checks_only_the_new_one(monkeypatch):
    """A property update: the namespace's message leaves its place and a new one for
    the same key is appended. No checked prefix matches; the other messages are the
    objects checked last time (in new tuples, as Node.to_file gives them)."""
    messages = _messages(10)
    node = _root(messages)
    encode_node(node, ORDER)
    checked = _spy_on_checks(monkeypatch)
    update = (messages[0][0], DEF.format("new"), 11)
    buffer = [tuple(m) for m in messages[1:]] + [update]
    data = encode_node(_copy(node, buffer), ORDER)
    # the old encoder checked all 10 values again
    assert checked == [[update[1]]]
    assert data == _unmemoized(_copy(node, buffer), compression=None)


def test_a_value_changed_in_place_is_checked_again():
    node = _root(_messages(2))
    encode_node(node, ORDER)
    node.values[1] = "../../etc/passwd"  # the same list object, another element
    with pytest.raises(InvalidArgumentError, match="passwd"):
        encode_node(node, ORDER)
    node = _root(_messages(2))
    encode_node(node, ORDER)
    node.children[2] = "/abs/node.arrow"
    with pytest.raises(InvalidArgumentError, match="abs"):
        encode_node(node, ORDER)
    node = _root(_messages(2))
    encode_node(node, ORDER)
    node.keys.reverse()
    with pytest.raises(InvalidArgumentError, match="ascending"):
        encode_node(node, ORDER)


def test_an_unsafe_new_message_after_checked_ones_is_refused():
    messages = _messages(3)
    encode_node(_root(messages), ORDER)
    bad = [*messages, ("C===ns  zz  ", "../outside.binpb", 9)]
    with pytest.raises(InvalidArgumentError, match="outside"):
        encode_node(_root(bad), ORDER)


def test_a_message_replaced_by_a_look_alike_is_checked_again():
    messages = _messages(3)
    encode_node(_root(messages), ORDER)
    key, value, _ = messages[0]
    # True == 1 and hash(True) == hash(1): an equality-keyed memo would take it for
    # version 1 and write "1"; the encoder refuses a bool version
    lying = [(key, value, True), *messages[1:]]
    with pytest.raises(InvalidArgumentError, match="txn"):
        encode_node(_root(lying), ORDER)

    class Sneaky(str):
        pass

    look_alike = [(key, Sneaky(value), 1), *messages[1:]]
    data = encode_node(_root(look_alike), ORDER)  # checked again (and safe): same bytes
    assert data == _unmemoized(_root(messages), None)


def test_a_table_mutated_after_being_remembered_does_not_change_the_memo():
    node = _root(_messages(2))
    encode_node(node, ORDER)
    remembered = node_encode._checked_tables[0]
    node.keys.append("C===ns  z   ")
    assert remembered[1] == ["C===ns  b   ", "C===ns  m   "]


def test_a_growing_roots_buffer_converts_only_the_new_messages(monkeypatch):
    """Each commit's root buffer is the previous one's plus the new messages: only those
    are converted to Arrow buffers again (the rest is the remembered segment)."""
    converted: list[int] = []
    real = node_encode.segment

    def spy(columns):
        converted.append(len(columns[0]))
        return real(columns)

    monkeypatch.setattr(node_encode, "segment", spy)
    messages = _messages(8)
    node = _root(messages[:1])
    for n in range(1, 9):
        node = _copy(node, [tuple(m) for m in messages[:n]])
        expected = _unmemoized(node)
        converted.clear()
        assert encode_node(node, ORDER, compression="zstd") == expected
        if n >= 3:  # the first two build what is remembered
            assert sorted(converted) == [1, 3]  # this commit's message; the 3 system rows
