"""Copy-on-write updates of the B-epsilon tree: one `TreeWriter` builds one commit.

A commit puts its messages in the root buffer (they stay there, so the root of a version
tells what that version changed). When a buffer outgrows its cap (the flush policy's,
never above the format's budget), the largest groups of older messages move one level
down (into a child's buffer, or into a leaf's key table); oversized nodes are split into
balanced pieces and undersized ones merged or redistributed with a sibling, so every
invariant holds again when the commit is built.

Every node a commit touches is copied once and changed in memory any number of times, so
loading many keys in one commit writes each node file once.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping

from trinityfs.tree.budget import FlushPolicy, buffer_bytes, message_bytes
from trinityfs.tree.bulk import BottomUpBuilder
from trinityfs.tree.columns import ColumnBuffer
from trinityfs.tree.node import Message, MessageBuffer, Node
from trinityfs.tree.reader import check_placed, scan
from trinityfs.tree.store import NodeStore

SELF = -1  # group of messages addressed to a node's own keys
#: the smallest order whose trees a writer rebalances B*-style unless told otherwise:
#: measured to help at 1M tables with order 256 and to cost at 10k-100k with order 128
REDISTRIBUTE_MIN_ORDER = 256
#: the node fill of a bottom-up rebuild of trees of order >= BULK_FILL_MIN_ORDER: room
#: for ~11% more keys in every node before the first split (a full bulk-built tree
#: splits every node it touches, and its root ends up with twice the children)
BULK_FILL = 0.9
#: measured at 1M tables for orders 128 (the default) and 256; smaller trees keep full
#: nodes (docs/FORMAT-CHOICES.md, "Node size and flush policy")
BULK_FILL_MIN_ORDER = 128


class TreeWriter:
    """Applies one commit's changes onto a base root, producing a new (unwritten) root."""

    #: the policy of writers not given one (benchmarks swap it to measure the writer
    #: that flushed only at the format's budget: FlushPolicy(2**62, 2**62))
    default_policy = FlushPolicy()
    #: B*-style rebalancing: a node that overflows hands keys to a neighbour with room
    #: through the parent's separator (a rotation) instead of splitting. None: on for
    #: trees of order >= REDISTRIBUTE_MIN_ORDER (docs/FORMAT-CHOICES.md, "Steady state")
    redistribute: bool | None = None
    #: how full the bottom-up rebuild (the commit after a bulk load, or of a root
    #: holding more than `rebuild_messages` older messages) fills nodes: a fraction of
    #: order-1 keys. None: BULK_FILL for trees of order >= BULK_FILL_MIN_ORDER, else
    #: full nodes (docs/FORMAT-CHOICES.md, "Node size and flush policy")
    bulk_fill: float | None = None

    def __init__(
        self,
        store: NodeStore,
        order: int,
        budget: int,
        version: int,
        policy: FlushPolicy | None = None,
        emit: Callable[[Node], str | Node] | None = None,
    ):
        """`emit` writes a node the bottom-up rebuild has finished and returns its
        location (`NodeStore.node_emitter`): a rebuilt tree is then written while it is
        built instead of held in memory until the commit writes its new nodes."""
        if order < 3:
            raise ValueError("tree order must be at least 3")
        self.store = store
        self.order = order
        self.budget = budget
        self.version = version
        self.policy = policy or self.default_policy
        self.emit: Callable[[Node], str | Node] = emit or _keep
        self.root_cap = self.policy.root_cap(budget)
        self.node_cap = self.policy.node_cap(budget)
        self.max_keys = order - 1
        self.min_keys = math.ceil(order / 2) - 1
        if self.redistribute is None:
            self.redistribute = order >= REDISTRIBUTE_MIN_ORDER
        if self.bulk_fill is None:
            self.bulk_fill = BULK_FILL if order >= BULK_FILL_MIN_ORDER else 1.0

    # -- entry points ---------------------------------------------------------------

    def commit(self, base_root: Node, changes: Mapping[str, str | None]) -> Node:
        """New root = base root + `changes` (key -> location, None deletes) as messages."""
        buffer = base_root.buffer
        if isinstance(buffer, ColumnBuffer):  # all older: the base root is committed
            replaced = sum(1 for key in changes if key in buffer)
            if len(buffer) - replaced > self.policy.rebuild_messages:  # as _settle_root
                return self._settle_root(self._rebuild_columns(base_root, buffer, changes))
        root = base_root.copy()
        for key, value in changes.items():
            root.buffer[key] = (value, self.version)
        return self._settle_root(root)

    # -- the root -------------------------------------------------------------------

    def _older(self, message: Message) -> bool:
        return message[1] < self.version

    def _settle_root(self, root: Node) -> Node:
        limit = self.policy.rebuild_messages
        # no more older messages than messages: counted only when there may be too many
        if len(root.buffer) > limit and sum(map(self._older, root.buffer.values())) > limit:
            root = self._rebuild(root)
        while True:
            if self._root_over_budget(root):
                if root.is_leaf:
                    older = {k: m for k, m in root.buffer.items() if self._older(m)}
                    for key in older:
                        del root.buffer[key]
                    self._apply_to_leaf(root, older)
                else:
                    self._flush(root, self._older, self._root_cap(root))
            if len(root.keys) > self.max_keys:
                root = self._grow(root)
            elif not root.is_leaf and not root.keys:
                root = self._collapse(root)
            elif not self._root_over_budget(root):
                return root

    def _rebuild(self, root: Node) -> Node:
        """Merge the root's older messages into the tree below it, built bottom-up.

        One sorted pass over the old tree and the messages: each new node is built
        once, full, and the builder holds O(depth * order) entries at a time (the
        messages themselves are in memory already, decoded with the root).
        """
        older = sorted((k, m[0]) for k, m in root.buffer.items() if self._older(m))
        newer = MessageBuffer((k, m) for k, m in root.buffer.items() if not self._older(m))
        return self._build_below(root, older, newer)

    def _rebuild_columns(
        self, base_root: Node, buffer: ColumnBuffer, changes: Mapping[str, str | None]
    ) -> Node:
        """`_rebuild` of a committed root whose buffer is Arrow columns (a bulk load's),
        without a Python object per message: its messages (sorted, all older than this
        commit) stream through the merge a slice at a time, except those `changes`
        replace, which stay in the new root as this commit's messages."""
        older = (
            (key, value)
            for key, value, _version in buffer.rows()
            if key not in changes  # replaced by this commit's message for the key
        )
        newer = MessageBuffer((key, (value, self.version)) for key, value in changes.items())
        return self._build_below(base_root, older, newer)

    def _build_below(
        self, root: Node, older: Iterable[tuple[str, str | None]], newer: MessageBuffer
    ) -> Node:
        """The tree below `root` with the sorted `older` messages applied, built
        bottom-up (each node emitted as it is cut), under a root holding `newer`."""
        below = Node(keys=root.keys, values=root.values, children=root.children)
        builder = BottomUpBuilder(self.order, self.emit, self.bulk_fill)
        for key, value in _overlay(scan(self.store, below), older):
            builder.add(key, value)
        new_root = builder.finish()
        flush = getattr(self.emit, "flush", None)
        if flush is not None:
            flush()  # the rebuilt tree is written (durably) before the commit goes on
        new_root.buffer = newer
        new_root.system = dict(root.system)
        return new_root

    def _root_over_budget(self, root: Node) -> bool:
        if root.buffer.nbytes <= self._root_cap(root):
            return False
        return any(self._older(m) for m in root.buffer.values())

    def _root_cap(self, root: Node) -> int:
        """The root's buffer cap, which may grow with the root's fan-out (FlushPolicy)."""
        if root.children is None or not self.policy.root_cap_children:
            return self.root_cap
        return self.policy.root_cap(self.budget, len(root.children))

    def _grow(self, root: Node) -> Node:
        """Split an oversized root under a new root that keeps the whole buffer."""
        buffer, system = root.buffer, root.system
        root.buffer, root.system = MessageBuffer(), {}
        pieces, separators, lifted = self._pack(root)
        new_root = Node(
            keys=[k for k, _ in separators],
            values=[v for _, v in separators],
            children=list(pieces),
            buffer=buffer,
            system=system,
        )
        for key, message in lifted.items():
            new_root.buffer.setdefault(key, message)
        return new_root

    def _collapse(self, root: Node) -> Node:
        """A root left with one child hands its buffer to that child, which becomes root."""
        child = self._own(root, 0)
        for key, message in root.buffer.items():
            child.buffer[key] = message  # the root's messages are the newer ones
        child.system = root.system
        self._fix_underflows(child)
        return child

    # -- buffers --------------------------------------------------------------------

    def _settle(self, node: Node) -> None:
        """Flush an internal non-root node until its buffer fits the budget."""
        while not node.is_leaf and node.buffer.nbytes > self.node_cap:
            self._flush(node, lambda _m: True, self.node_cap)

    def _flush(self, node: Node, eligible: Callable[[Message], bool], cap: int) -> None:
        """Move the largest groups of eligible messages out of `node`'s buffer until it
        is within `cap`: each group rewrites one child, so the biggest ones go first."""
        groups: dict[int, dict[str, Message]] = {}
        for key, message in node.buffer.items():
            if not eligible(message):
                continue
            i = bisect_left(node.keys, key)
            target = SELF if i < len(node.keys) and node.keys[i] == key else i
            groups.setdefault(target, {})[key] = message
        sizes = {t: sum(message_bytes(k, m) for k, m in g.items()) for t, g in groups.items()}
        remaining = node.buffer.nbytes
        chosen: list[int] = []
        for target in sorted(groups, key=lambda t: sizes[t], reverse=True):
            if remaining <= cap:
                break
            chosen.append(target)
            remaining -= sizes[target]
        for target in chosen:
            for key in groups[target]:
                del node.buffer[key]
        # Highest child first: splitting child i only shifts the indexes above i.
        targets = sorted((t for t in chosen if t != SELF), reverse=True)
        if self.redistribute:  # a rotation may change child i-1 too: push every group first
            for i in targets:
                self._push(node, i, groups[i])
            for i in targets:
                self._split_child(node, i)
        else:
            for i in targets:
                self._push(node, i, groups[i])
                self._split_child(node, i)
        if SELF in chosen:
            self._apply_to_own_keys(node, groups[SELF])
        self._fix_underflows(node)

    def _push(self, node: Node, i: int, messages: dict[str, Message]) -> None:
        child = self._own(node, i)
        if child.is_leaf:
            self._apply_to_leaf(child, messages)
        else:
            child.buffer.update(messages)  # messages from above are newer
            self._settle(child)

    def _apply_to_leaf(self, leaf: Node, messages: Mapping[str, Message]) -> None:
        if not messages:
            return
        if len(messages) <= 8:
            for key, (value, _txn) in messages.items():
                i = bisect_left(leaf.keys, key)
                found = i < len(leaf.keys) and leaf.keys[i] == key
                if value is None:
                    if found:
                        del leaf.keys[i]
                        del leaf.values[i]
                elif found:
                    leaf.values[i] = value
                else:
                    leaf.keys.insert(i, key)
                    leaf.values.insert(i, value)
            return
        entries = dict(zip(leaf.keys, leaf.values, strict=True))
        for key, (value, _txn) in messages.items():
            if value is None:
                entries.pop(key, None)
            else:
                entries[key] = value
        leaf.keys = sorted(entries)
        leaf.values = [entries[k] for k in leaf.keys]

    def _apply_to_own_keys(self, node: Node, messages: dict[str, Message]) -> None:
        """Apply messages addressed to keys stored in `node` itself (an internal node)."""
        for key in sorted(messages, reverse=True):
            value, _txn = messages[key]
            j = bisect_left(node.keys, key)
            if j >= len(node.keys) or node.keys[j] != key:
                # The key moved down by a merge meanwhile: it is addressed to a child again.
                node.buffer.setdefault(key, messages[key])
                continue
            if value is not None:
                node.values[j] = value
                continue
            # Deleting a separator: join the two subtrees it separated.
            left, right = self._own(node, j), self._own(node, j + 1)
            del node.keys[j]
            del node.values[j]
            node.children[j : j + 2] = [self._join(left, right)]
            self._split_child(node, j)

    # -- structure ------------------------------------------------------------------

    def _own(self, parent: Node, i: int) -> Node:
        """Child i of `parent`, copied for writing once per commit."""
        ref = parent.children[i]
        if isinstance(ref, Node) and ref.location is None:
            return ref
        committed = self.store.resolve(ref)
        check_placed(parent, i, committed)  # a lying tree is refused, not carried on
        node = committed.copy()
        parent.children[i] = node
        return node

    def _join(self, left: Node, right: Node) -> Node:
        """One node holding two adjacent sibling subtrees (no separator between them)."""
        if left.is_leaf:
            return Node(
                keys=left.keys + right.keys, values=left.values + right.values, children=None
            )
        mid = self._join(self._own(left, len(left.children) - 1), self._own(right, 0))
        joined = Node(
            keys=left.keys + right.keys,
            values=left.values + right.values,
            children=[*left.children[:-1], mid, *right.children[1:]],
            buffer={**left.buffer, **right.buffer},
        )
        self._split_child(joined, len(left.children) - 1)
        self._fix_underflows(joined)
        self._settle(joined)
        return joined

    def _split_child(self, node: Node, i: int) -> None:
        child = node.children[i]
        if not isinstance(child, Node) or len(child.keys) <= self.max_keys:
            return
        if self.redistribute and len(node.children) > 1 and self._rotate(node, i):
            return
        pieces, separators, lifted = self._pack(child)
        node.keys[i:i] = [k for k, _ in separators]
        node.values[i:i] = [v for _, v in separators]
        node.children[i : i + 1] = pieces
        for key, message in lifted.items():
            node.buffer.setdefault(key, message)  # a message already above is newer

    def _rotate(self, node: Node, i: int) -> bool:
        """Move keys of overflowing child i into a neighbour with room, through the
        parent's separator (a B-tree rotation); False when no neighbour can take them.

        Only the overflowing child, that neighbour and `node` change: the buffered
        messages of the moved key range go with it, and no buffer is flushed, because
        a neighbour is chosen only if its buffer stays within the node cap.
        """
        child = node.children[i]
        assert isinstance(child, Node)
        best: tuple[int, int] | None = None
        for j in (i - 1, i + 1):
            if 0 <= j < len(node.children):
                count = self._rotation_count(child, self.store.resolve(node.children[j]), j < i)
                if count and (best is None or count > best[1]):
                    best = (j, count)
        if best is None:
            return False
        j, count = best
        neighbour = self._own(node, j)
        if j < i:
            _rotate_left(node, j, neighbour, child, count)
        else:
            _rotate_right(node, i, child, neighbour, count)
        return True

    def _rotation_count(self, child: Node, neighbour: Node, leftward: bool) -> int:
        """How many keys to rotate from `child` into `neighbour` (0: it cannot take
        them): enough to even the two out, fewer if the buffered messages that move
        with them would overfill the neighbour's buffer, never fewer than the overflow."""
        overflow = len(child.keys) - self.max_keys
        room = self.max_keys - len(neighbour.keys)
        if room < overflow:
            return 0
        count = min(room, max(overflow, (len(child.keys) - len(neighbour.keys)) // 2))
        if child.is_leaf:
            return count
        free = self.node_cap - buffer_bytes(neighbour.buffer)
        # Rotating k keys moves the messages on the far side of the new separator
        # (child.keys[k - 1] leftward, child.keys[-k] rightward): walk k down from
        # `count`, handing the messages between two candidate separators back, once each.
        ordered = sorted(child.buffer.items(), reverse=not leftward)
        sizes = [message_bytes(k, m) for k, m in ordered]
        moved = 0
        end = 0  # messages ordered[:end] move with the current separator candidate
        if leftward:
            while end < len(ordered) and ordered[end][0] < child.keys[count - 1]:
                moved += sizes[end]
                end += 1
        else:
            while end < len(ordered) and ordered[end][0] > child.keys[-count]:
                moved += sizes[end]
                end += 1
        while count >= overflow:
            if moved <= free:
                return count
            count -= 1
            if count < overflow:
                break
            separator = child.keys[count - 1] if leftward else child.keys[-count]
            while end > 0 and (
                ordered[end - 1][0] >= separator if leftward else ordered[end - 1][0] <= separator
            ):
                end -= 1
                moved -= sizes[end]
        return 0

    def _pack(self, node: Node) -> tuple[list[Node], list[tuple[str, str]], dict[str, Message]]:
        """Cut an oversized node into the fewest balanced pieces.

        Returns the pieces, the separators between them, and the buffered messages that
        address a separator (they must move up with it).
        """
        total = len(node.keys)
        n_pieces = math.ceil((total + 1) / self.order)
        in_pieces = total - (n_pieces - 1)
        base, extra = divmod(in_pieces, n_pieces)
        pieces: list[Node] = []
        separators: list[tuple[str, str]] = []
        pos = 0
        for p in range(n_pieces):
            count = base + (1 if p < extra else 0)
            children = None if node.is_leaf else node.children[pos : pos + count + 1]
            pieces.append(
                Node(
                    keys=node.keys[pos : pos + count],
                    values=node.values[pos : pos + count],
                    children=children,
                )
            )
            pos += count
            if p < n_pieces - 1:
                separators.append((node.keys[pos], node.values[pos]))
                pos += 1
        lifted: dict[str, Message] = {}
        sep_keys = [k for k, _ in separators]
        for key, message in node.buffer.items():
            j = bisect_left(sep_keys, key)
            if j < len(sep_keys) and sep_keys[j] == key:
                lifted[key] = message
            else:
                pieces[j].buffer[key] = message
        return pieces, separators, lifted

    def _fix_underflows(self, node: Node) -> None:
        """Merge or redistribute every undersized new child of `node` with a sibling."""
        if node.is_leaf:
            return
        while len(node.children) > 1:
            i = next(
                (
                    i
                    for i, c in enumerate(node.children)
                    if isinstance(c, Node) and c.location is None and len(c.keys) < self.min_keys
                ),
                None,
            )
            if i is None:
                return
            lo = i if i + 1 < len(node.children) else i - 1
            left, right = self._own(node, lo), self._own(node, lo + 1)
            merged = Node(
                keys=[*left.keys, node.keys[lo], *right.keys],
                values=[*left.values, node.values[lo], *right.values],
                children=None if left.is_leaf else [*left.children, *right.children],
                buffer={**left.buffer, **right.buffer},
            )
            del node.keys[lo]
            del node.values[lo]
            node.children[lo : lo + 2] = [merged]
            self._fix_underflows(merged)
            self._settle(merged)
            self._split_child(node, lo)


def _rotate_left(node: Node, lo: int, left: Node, right: Node, count: int) -> None:
    """Move the first `count` keys of `right` (child lo+1 of `node`) into `left`
    (child lo) through separator lo: the separator goes down, right's count-th key up."""
    up = count - 1
    sep_key = right.keys[up]
    left.keys += [node.keys[lo], *right.keys[:up]]
    left.values += [node.values[lo], *right.values[:up]]
    node.keys[lo], node.values[lo] = sep_key, right.values[up]
    del right.keys[:count], right.values[:count]
    if right.children is not None and left.children is not None:
        left.children += right.children[:count]
        del right.children[:count]
    _move_messages(right, left, node, sep_key, lambda key: key < sep_key)


def _rotate_right(node: Node, lo: int, left: Node, right: Node, count: int) -> None:
    """Move the last `count` keys of `left` (child lo of `node`) into `right` (child
    lo+1) through separator lo: the separator goes down, left's count-th last key up."""
    stay = len(left.keys) - count
    sep_key = left.keys[stay]
    right.keys[0:0] = [*left.keys[stay + 1 :], node.keys[lo]]
    right.values[0:0] = [*left.values[stay + 1 :], node.values[lo]]
    node.keys[lo], node.values[lo] = sep_key, left.values[stay]
    del left.keys[stay:], left.values[stay:]
    if left.children is not None and right.children is not None:
        right.children[0:0] = left.children[stay + 1 :]
        del left.children[stay + 1 :]
    _move_messages(left, right, node, sep_key, lambda key: key > sep_key)


def _move_messages(
    source: Node, dest: Node, parent: Node, sep_key: str, moves: Callable[[str], bool]
) -> None:
    """After a rotation: `source`'s messages for the moved key range go to `dest`
    (which had none for it), one for the new separator up into `parent`."""
    for key in [k for k in source.buffer if moves(k) or k == sep_key]:
        message = source.buffer.pop(key)
        if key == sep_key:
            parent.buffer.setdefault(key, message)  # a message already above is newer
        else:
            dest.buffer[key] = message


def _keep(node: Node) -> Node:
    """The default emit: a finished node stays in memory until the commit writes it."""
    return node


_END = object()


def _overlay(
    pairs: Iterable[tuple[str, str]], messages: Iterable[tuple[str, str | None]]
) -> Iterator[tuple[str, str]]:
    """Sorted `pairs` with sorted `messages` applied (a None value deletes the key);
    both are consumed as streams."""
    pending = iter(messages)
    message = next(pending, _END)
    for key, value in pairs:
        while message is not _END and message[0] < key:  # type: ignore[index]
            if message[1] is not None:  # type: ignore[index]
                yield message  # type: ignore[misc]
            message = next(pending, _END)
        if message is not _END and message[0] == key:  # type: ignore[index]
            if message[1] is not None:  # type: ignore[index]
                yield message  # type: ignore[misc]
            message = next(pending, _END)
        else:
            yield key, value
    while message is not _END:
        if message[1] is not None:  # type: ignore[index]
            yield message  # type: ignore[misc]
        message = next(pending, _END)
