"""In-memory tree nodes and their conversion to and from node files.

A `Node` loaded from storage is shared (cached) and never mutated; the writer makes a
private copy (`Node.copy`) before changing anything, which is what makes the tree
copy-on-write. Children are referenced by location (committed) or by `Node` (new in the
commit being built).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trinityfs.format.node_decode import BufferColumns
from trinityfs.format.nodefile import NodeFile
from trinityfs.tree.budget import Message, MessageBuffer
from trinityfs.tree.columns import ColumnBuffer

__all__ = ["ColumnBuffer", "Message", "MessageBuffer", "Node"]


@dataclass(eq=False, slots=True)
class Node:
    """One B-epsilon tree node: a B-tree key table plus a write buffer.

    A committed root decoded with its buffer left as Arrow columns (a bulk load's) has
    a read-only `ColumnBuffer`; every other node a `MessageBuffer`.
    """

    keys: list[str]
    values: list[str]
    children: list[str | Node] | None  # k+1 references, None for a leaf
    buffer: MessageBuffer | ColumnBuffer = field(default_factory=MessageBuffer)
    system: dict[str, str] = field(default_factory=dict)
    location: str | None = None  # set for committed (immutable) nodes
    _span: tuple[str, str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.buffer, MessageBuffer | ColumnBuffer):
            self.buffer = MessageBuffer(self.buffer)

    @property
    def is_leaf(self) -> bool:
        return self.children is None

    @property
    def is_committed(self) -> bool:
        return self.location is not None

    def key_span(self) -> tuple[str, str] | None:
        """(smallest, largest) key of the key table and the buffer, None when the node
        holds neither; kept on a committed node (it never changes)."""
        if self._span is not None:
            return self._span
        ends = [self.keys[0], self.keys[-1]] if self.keys else []
        if self.buffer:
            ends += self.buffer.span() if isinstance(self.buffer, ColumnBuffer) else self.buffer
        if not ends:
            return None
        span = (min(ends), max(ends))
        if self.location is not None:
            self._span = span
        return span

    def copy(self) -> Node:
        """A private, mutable copy (the copy-on-write step)."""
        return Node(
            keys=list(self.keys),
            values=list(self.values),
            children=None if self.children is None else list(self.children),
            buffer=self.buffer.copy(),
            system=dict(self.system),
            location=None,
        )

    @classmethod
    def empty_leaf(cls) -> Node:
        return cls(keys=[], values=[], children=None)

    @classmethod
    def from_file(cls, nf: NodeFile, location: str | None) -> Node:
        rows = nf.buffer
        buffer: MessageBuffer | ColumnBuffer | None = None
        if isinstance(rows, BufferColumns):
            buffer = ColumnBuffer.from_columns(rows.keys, rows.values, rows.versions)
            if buffer is None:  # not sorted by key: decode it message by message
                rows = zip(
                    rows.keys.to_pylist(),
                    rows.values.to_pylist(),
                    rows.versions.to_pylist(),
                    strict=True,
                )
        if buffer is None:
            buffer = MessageBuffer()
            for key, value, txn in rows:
                buffer.pop(key, None)  # the newest message for a key wins and keeps its place
                buffer[key] = (value, txn)
        return cls(
            keys=list(nf.keys),
            values=list(nf.values),
            children=None if nf.children is None else list(nf.children),
            buffer=buffer,
            system=dict(nf.system),
            location=location,
        )

    def to_file(self) -> NodeFile:
        """The node file image; every child must already have a location."""
        children: list[str] | None = None
        if self.children is not None:
            children = []
            for child in self.children:
                if isinstance(child, Node):
                    if child.location is None:
                        raise RuntimeError("child node written before it has a location")
                    children.append(child.location)
                else:
                    children.append(child)
        ordered = sorted(self.buffer.items(), key=lambda item: (item[1][1], item[0]))
        return NodeFile(
            system=dict(self.system),
            keys=list(self.keys),
            values=list(self.values),
            children=children,
            buffer=[(k, v, t) for k, (v, t) in ordered],
        )
