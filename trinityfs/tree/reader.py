"""Merge-on-read access to a committed tree: point lookups and ordered range scans.

A message in a node's buffer is newer than anything below it, so a lookup returns the
first message or key it meets on the way down, and a scan overlays each node's buffer on
the merged stream of its subtree.

Every child is checked against the key range its ancestors' separators give it (`Bounds`)
when it is reached: a root that lies (a node referenced twice, or placed under the wrong
separator) is CorruptFileError naming the node, never a listing with keys twice or a
lookup that misses a key the tree holds. Two comparisons per level; the node's key span
is computed once per loaded node.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Iterator

from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import parse_root_node_file
from trinityfs.tree.node import Node
from trinityfs.tree.store import NodeStore

#: (lower, upper) separators around a subtree, both exclusive; None: unbounded
Bounds = tuple[str | None, str | None]
UNBOUNDED: Bounds = (None, None)


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
    node, bounds = root, UNBOUNDED
    while True:
        message = node.buffer.get(key)
        if message is not None:
            return message[0]
        i = bisect_left(node.keys, key)
        if i < len(node.keys) and node.keys[i] == key:
            return node.values[i]
        if node.children is None:
            return None
        node, bounds = _child(store, node, i, bounds)


def _child(store: NodeStore, parent: Node, i: int, bounds: Bounds) -> tuple[Node, Bounds]:
    """Child i of `parent` and its bounds, checked: its keys and messages must lie
    strictly between the separators around it."""
    child = store.resolve(parent.children[i])
    return child, check_placed(parent, i, child, bounds)


def check_placed(parent: Node, i: int, child: Node, bounds: Bounds = UNBOUNDED) -> Bounds:
    """The bounds of child i of `parent` (CorruptFileError when the child's keys or
    messages do not lie strictly between them)."""
    keys = parent.keys
    lo = keys[i - 1] if i > 0 else bounds[0]
    hi = keys[i] if i < len(keys) else bounds[1]
    if child.children is not None and not child.keys:
        # It would narrow no range: a node that names itself (or a ring of such nodes)
        # below it would be descended forever.
        raise CorruptFileError(
            child.location or "a new node",
            f"an internal node with no keys below {parent.location or '(new)'}: every node "
            "below the root but a leaf has at least ceil(order/2) children (FORMAT.md 4)",
        )
    span = child.key_span()
    if span is None:
        return lo, hi
    if (lo is not None and span[0] <= lo) or (hi is not None and span[1] >= hi):
        raise CorruptFileError(
            child.location or "a new node",
            f"holds keys {_shown(span[0])} to {_shown(span[1])}, outside the range "
            f"({_shown(lo)}, {_shown(hi)}) its parent {parent.location or '(new)'} gives it: "
            "a node referenced twice or placed under the wrong separator",
        )
    return lo, hi


def _shown(key: str | None) -> str:
    """A key as the user knows it: padding stripped, cut short."""
    if key is None:
        return "-"
    text = " ".join(key.split())
    return repr(text if len(text) <= 60 else text[:57] + "...")


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


def scan_list(
    store: NodeStore, root: Node, lo: str = "", hi: str | None = None, limit: int | None = None
) -> list[tuple[str, str]]:
    """The first `limit` pairs `scan` yields (all when None), as a list.

    Built a leaf slice at a time (a listing page costs list extends, not a generator
    step per key per tree level); a node's messages are merged over its subtree's list.
    """
    out: list[tuple[str, str]] = []
    try:
        _collect(store, root, lo, hi, out, limit)
    except CorruptFileError as exc:
        raise exc.with_version(version_of(root)) from None
    return out


def _collect(
    store: NodeStore,
    node: Node,
    lo: str,
    hi: str | None,
    out: list[tuple[str, str]],
    limit: int | None,
    bounds: Bounds = UNBOUNDED,
) -> bool:
    """Append the subtree's live pairs in [lo, hi) to `out`, up to `limit` pairs in
    `out`; False once it is full."""
    room = None if limit is None else limit - len(out)
    if room is not None and room <= 0:
        return False
    messages = _messages(node, lo, hi)
    if not messages:
        return _collect_base(store, node, lo, hi, out, limit, bounds)
    # Each message replaces or deletes at most one pair below, so `room` + len(messages)
    # pairs of the subtree hold the first `room` pairs of the merge.
    base: list[tuple[str, str]] = []
    room_below = None if room is None else room + len(messages)
    _collect_base(store, node, lo, hi, base, room_below, bounds)
    merged = spliced(base, messages)
    out.extend(merged if room is None else merged[:room])
    return limit is None or len(out) < limit


def spliced(
    base: list[tuple[str, str]], messages: list[tuple[str, str | None]]
) -> list[tuple[str, str]]:
    """`messages` (newer, by key; None deletes) laid over the ordered pairs `base`, as a
    new list: each message found by bisection, the pairs between copied as slices (few
    messages over many pairs)."""
    out: list[tuple[str, str]] = []
    done = 0
    for mkey, mvalue in messages:
        at = bisect_left(base, mkey, done, key=_first_of)
        out.extend(base[done:at])
        if at < len(base) and base[at][0] == mkey:
            at += 1  # replaced or deleted by the newer message
        if mvalue is not None:
            out.append((mkey, mvalue))
        done = at
    out.extend(base[done:])
    return out


_first_of = operator.itemgetter(0)


def _collect_base(
    store: NodeStore,
    node: Node,
    lo: str,
    hi: str | None,
    out: list[tuple[str, str]],
    limit: int | None,
    bounds: Bounds = UNBOUNDED,
) -> bool:
    """`_collect` without this node's buffer applied (like `_base`)."""
    keys = node.keys
    start = bisect_left(keys, lo)
    if node.children is None:
        end = len(keys) if hi is None else bisect_left(keys, hi, start)
        if limit is not None:
            end = min(end, start + limit - len(out))
        out.extend(zip(keys[start:end], node.values[start:end], strict=True))
        return limit is None or len(out) < limit
    for i in range(start, len(keys) + 1):
        if i > 0 and hi is not None and keys[i - 1] >= hi:
            return True
        child, below = _child(store, node, i, bounds)
        if not _collect(store, child, lo, hi, out, limit, below):
            return False
        if i < len(keys):
            if hi is not None and keys[i] >= hi:
                return True
            if keys[i] >= lo:
                out.append((keys[i], node.values[i]))
                if limit is not None and len(out) >= limit:
                    return False
    return True


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
    return scan(store, root, *prefix_range(prefix, after))


def prefix_range(prefix: str, after: str | None = None) -> tuple[str, str | None]:
    """[lo, hi) of the keys starting with `prefix`, strictly after `after` if given."""
    lo = prefix if after is None or after < prefix else after + "\x00"
    return lo, prefix_upper_bound(prefix)


def _messages(node: Node, lo: str, hi: str | None) -> list[tuple[str, str | None]]:
    """The node's buffered (key, value or None) in [lo, hi), by key."""
    if not node.buffer:
        return []
    between = getattr(node.buffer, "between", None)
    if between is not None:  # a ColumnBuffer: sorted already, sliced by binary search
        return between(lo, hi)
    return sorted((k, m[0]) for k, m in node.buffer.items() if k >= lo and (hi is None or k < hi))


def _scan(
    store: NodeStore, node: Node, lo: str, hi: str | None, bounds: Bounds = UNBOUNDED
) -> Iterator[tuple[str, str]]:
    messages = _messages(node, lo, hi)
    base = _base(store, node, lo, hi, bounds)
    if not messages:
        yield from base
        return
    yield from _merged(base, messages)


def _merged(
    base: Iterator[tuple[str, str]], messages: list[tuple[str, str | None]]
) -> Iterator[tuple[str, str]]:
    """`messages` (newer) overlaid on the ordered pairs `base`; None values delete."""
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


def _base(
    store: NodeStore, node: Node, lo: str, hi: str | None, bounds: Bounds = UNBOUNDED
) -> Iterator[tuple[str, str]]:
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
        child, below = _child(store, node, i, bounds)
        yield from _scan(store, child, lo, hi, below)
        if i < len(keys):
            if hi is not None and keys[i] >= hi:
                return
            if keys[i] >= lo:
                yield keys[i], node.values[i]
