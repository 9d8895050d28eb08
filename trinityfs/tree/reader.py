"""Merge-on-read access to a committed tree: point lookups and ordered range scans.

A message in a node's buffer is newer than anything below it, so a lookup returns the
first message or key it meets on the way down, and a scan overlays each node's buffer on
the merged stream of its subtree.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import parse_root_node_file
from trinityfs.tree.node import Node
from trinityfs.tree.store import NodeStore


def version_of(root: Node) -> int | None:
    """The version a committed root belongs to (None for exports, transactions, new roots)."""
    if root.location is None:
        return None
    return parse_root_node_file(root.location.rpartition("/")[2])


def lookup(store: NodeStore, root: Node, key: str) -> str | None:
    """The value of `key`, or None when the tree does not hold it.

    A corrupt node raises CorruptFileError naming the file and the root's version.
    """
    try:
        return _lookup(store, root, key)
    except CorruptFileError as exc:
        raise exc.with_version(version_of(root)) from None


def _lookup(store: NodeStore, root: Node, key: str) -> str | None:
    node = root
    while True:
        message = node.buffer.get(key)
        if message is not None:
            return message[0]
        i = bisect_left(node.keys, key)
        if i < len(node.keys) and node.keys[i] == key:
            return node.values[i]
        if node.children is None:
            return None
        node = store.resolve(node.children[i])


def scan(
    store: NodeStore, root: Node, lo: str = "", hi: str | None = None
) -> Iterator[tuple[str, str]]:
    """Live (key, value) pairs with lo <= key < hi, in key order (hi None: unbounded).

    A corrupt node raises CorruptFileError naming the file and the root's version.
    """
    try:
        yield from _scan(store, root, lo, hi)
    except CorruptFileError as exc:
        raise exc.with_version(version_of(root)) from None


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string starting with `prefix`."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last < 0x10FFFF:
            nxt = last + 1
            if 0xD800 <= nxt <= 0xDFFF:
                nxt = 0xE000
            return "".join(chars) + chr(nxt)
    return None


def scan_prefix(store: NodeStore, root: Node, prefix: str, after: str | None = None):
    """Live pairs whose key starts with `prefix`, optionally strictly after key `after`."""
    lo = prefix if after is None or after < prefix else after + "\x00"
    return scan(store, root, lo, prefix_upper_bound(prefix))


def _scan(store: NodeStore, node: Node, lo: str, hi: str | None) -> Iterator[tuple[str, str]]:
    messages = sorted(
        (k, m[0]) for k, m in node.buffer.items() if k >= lo and (hi is None or k < hi)
    )
    base = _base(store, node, lo, hi)
    if not messages:
        yield from base
        return
    mi = 0
    for key, value in base:
        while mi < len(messages) and messages[mi][0] < key:
            mkey, mvalue = messages[mi]
            if mvalue is not None:
                yield mkey, mvalue
            mi += 1
        if mi < len(messages) and messages[mi][0] == key:
            mvalue = messages[mi][1]
            if mvalue is not None:
                yield key, mvalue
            mi += 1
        else:
            yield key, value
    for mkey, mvalue in messages[mi:]:
        if mvalue is not None:
            yield mkey, mvalue


def _base(store: NodeStore, node: Node, lo: str, hi: str | None) -> Iterator[tuple[str, str]]:
    """The subtree's pairs without this node's buffer applied."""
    keys = node.keys
    start = bisect_left(keys, lo)
    if node.children is None:  # a leaf: one slice, no per-key bound check
        end = len(keys) if hi is None else bisect_left(keys, hi, start)
        yield from zip(keys[start:end], node.values[start:end], strict=True)
        return
    for i in range(start, len(keys) + 1):
        # child i holds keys between keys[i-1] and keys[i]
        if i > 0 and hi is not None and keys[i - 1] >= hi:
            return
        yield from _scan(store, store.resolve(node.children[i]), lo, hi)
        if i < len(keys):
            if hi is not None and keys[i] >= hi:
                return
            if keys[i] >= lo:
                yield keys[i], node.values[i]
