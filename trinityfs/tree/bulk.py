"""Bottom-up construction of a tree from a sorted stream of pairs, in bounded memory.

Each level keeps at most two nodes' worth of entries: a node is cut (and its file
written at once) only when enough entries follow it to make a valid last sibling, so
nothing already written ever needs to change and every non-root node ends up with at
least ceil(N/2)-1 keys. Memory is O(depth * order), independent of the number of pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from trinityfs.tree.node import Node


class _Level:
    """Entries of one level not yet cut into nodes: children (None on the leaf level)
    interleaved with keys, c0 k0 c1 k1 ... as in a node's key table."""

    def __init__(self, leaf: bool):
        self.keys: list[str] = []
        self.values: list[str] = []
        self.children: list[str | Node] | None = None if leaf else []


class BottomUpBuilder:
    """Feed sorted unique (key, value) pairs with `add`, then `finish` for the root.

    `emit(node)` writes one finished non-root node and returns its location (or returns
    the node itself, to be written with the commit's other new nodes). Nodes are
    filled to `fill` of order-1 keys (1.0: a bulk-loaded tree is as shallow as it can
    be; below 1.0 leaves room for inserts before the first splits), never below the
    minimum fill; the last two of each level are evened out so neither is undersized.
    """

    def __init__(self, order: int, emit: Callable[[Node], str | Node], fill: float = 1.0):
        if order < 3:
            raise ValueError("tree order must be at least 3")
        if not 0.0 < fill <= 1.0:
            raise ValueError(f"bulk fill must be in (0, 1], got {fill!r}")
        self.max_keys = order - 1
        self.min_keys = math.ceil(order / 2) - 1
        self.fill = max(self.min_keys, 1, math.floor(self.max_keys * fill))
        self.emit = emit
        self.levels: list[_Level] = [_Level(leaf=True)]
        self.count = 0
        self._last: str | None = None

    def add(self, key: str, value: str) -> None:
        if self._last is not None and not self._last < key:
            raise ValueError(f"bulk load keys must be strictly ascending: {self._last!r}, {key!r}")
        self._last = key
        self.count += 1
        level = self.levels[0]
        level.keys.append(key)
        level.values.append(value)
        self._cut_ready(0)

    def _cut_ready(self, i: int) -> None:
        """Cut full nodes off level i while a valid remainder is guaranteed behind them."""
        level = self.levels[i]
        while len(level.keys) >= 2 * self.fill + 2:
            node = self._take(level, self.fill)
            sep_key, sep_value = level.keys.pop(0), level.values.pop(0)
            self._push_up(i, self.emit(node), sep_key, sep_value)

    def _take(self, level: _Level, n: int) -> Node:
        """The first n keys of `level` (and their n+1 children) as a node."""
        keys, values = level.keys[:n], level.values[:n]
        del level.keys[:n], level.values[:n]
        children = None
        if level.children is not None:
            children = level.children[: n + 1]
            del level.children[: n + 1]
        return Node(keys=keys, values=values, children=children)

    def _push_up(self, i: int, child: str | Node, key: str | None, value: str | None) -> None:
        """Append a finished child of level i (and the separator after it) to level i+1."""
        if i + 1 == len(self.levels):
            self.levels.append(_Level(leaf=False))
        parent = self.levels[i + 1]
        assert parent.children is not None
        parent.children.append(child)
        if key is not None and value is not None:
            parent.keys.append(key)
            parent.values.append(value)
            self._cut_ready(i + 1)

    def finish(self) -> Node:
        """Cut the remaining entries of every level; returns the (unwritten) root."""
        i = 0
        while True:
            level = self.levels[i]
            top = i + 1 == len(self.levels)
            remaining = len(level.keys)
            if top and remaining <= self.max_keys:
                return Node(keys=level.keys, values=level.values, children=level.children)
            if remaining <= self.max_keys:
                self._push_up(i, self.emit(self._take(level, remaining)), None, None)
            else:  # two nodes with a separator, both at least half full
                left = (remaining - 1) // 2
                node = self._take(level, left)
                sep_key, sep_value = level.keys.pop(0), level.values.pop(0)
                self._push_up(i, self.emit(node), sep_key, sep_value)
                rest = self._take(level, len(level.keys))
                self._push_up(i, self.emit(rest), None, None)
            i += 1


def build_tree(
    pairs: Iterable[tuple[str, str]],
    order: int,
    emit: Callable[[Node], str | Node],
    fill: float = 1.0,
) -> Node:
    """The root of a tree holding `pairs` (sorted, unique keys); see BottomUpBuilder."""
    builder = BottomUpBuilder(order, emit, fill)
    for key, value in pairs:
        builder.add(key, value)
    return builder.finish()
