"""Sizes that drive flushing: message byte estimates, buffers that keep their running
size, and the writer's flush policy (how much each commit may leave in a buffer)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from trinityfs.format.definitions import (
    KEY_TABLE_ROW_EXTRA_BYTES,
    LAKEHOUSE_DEFAULTS,
    MESSAGE_ROW_OVERHEAD_BYTES,
    PROP_NODE_FILE_COMPRESSION,
)

# A buffered message: (value or None for "delete", version of the commit that wrote it).
Message = tuple[str | None, int]

ROW_OVERHEAD_BYTES = MESSAGE_ROW_OVERHEAD_BYTES  # Arrow offsets and validity bits of one row


def message_bytes(key: str, message: Message) -> int:
    """FORMAT-CHOICES' size estimate of one buffered message in a node file."""
    value, txn = message
    size = len(key.encode()) + len(str(txn)) + ROW_OVERHEAD_BYTES
    if value is not None:
        size += len(value.encode())
    return size


class MessageBuffer(dict[str, Message]):
    """A node's write buffer (key -> newest message) that knows its estimated size.

    `nbytes` is kept current by every mutation, so deciding whether a buffer must flush
    costs O(1) instead of re-summing every message (the whole root, every commit).
    """

    __slots__ = ("nbytes",)

    def __init__(self, items: Mapping[str, Message] | Iterable[tuple[str, Message]] = ()):
        super().__init__()
        self.nbytes = 0
        self.update(items)

    def __setitem__(self, key: str, message: Message) -> None:
        old = dict.get(self, key)
        if old is not None:
            self.nbytes -= message_bytes(key, old)
        dict.__setitem__(self, key, message)
        self.nbytes += message_bytes(key, message)

    def __delitem__(self, key: str) -> None:
        message = dict.pop(self, key)
        self.nbytes -= message_bytes(key, message)

    _MISSING = object()

    def pop(self, key: str, default: object = _MISSING) -> object:  # type: ignore[override]
        if key in self:
            message = dict.pop(self, key)
            self.nbytes -= message_bytes(key, message)
            return message
        if default is MessageBuffer._MISSING:
            raise KeyError(key)
        return default

    def popitem(self) -> tuple[str, Message]:
        key, message = dict.popitem(self)
        self.nbytes -= message_bytes(key, message)
        return key, message

    def setdefault(self, key: str, default: Message) -> Message:  # type: ignore[override]
        if key in self:
            return dict.__getitem__(self, key)
        self[key] = default
        return default

    def update(self, items=(), /, **kw) -> None:  # type: ignore[override]
        pairs = items.items() if isinstance(items, Mapping) else items
        for key, message in pairs:
            self[key] = message
        for key, message in kw.items():
            self[key] = message

    def __ior__(self, items):  # type: ignore[override]
        self.update(items)
        return self

    def clear(self) -> None:
        dict.clear(self)
        self.nbytes = 0

    def copy(self) -> MessageBuffer:
        twin = MessageBuffer()
        dict.update(twin, self)
        twin.nbytes = self.nbytes
        return twin

    def __reduce__(self):
        return (MessageBuffer, (dict(self),))


def buffer_bytes(buffer: Mapping[str, Message]) -> int:
    """Estimated bytes of a buffer (O(1) for a MessageBuffer or a ColumnBuffer)."""
    nbytes = getattr(buffer, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    return sum(message_bytes(k, m) for k, m in buffer.items())


# Writer-side caps (bytes of the estimate above), chosen from the sweep in
# docs/FORMAT-CHOICES.md ("Node size and flush policy"). FORMAT.md only bounds buffers
# from above (node size minus the key table estimate); flushing earlier is always valid.
DEFAULT_ROOT_BUFFER_BYTES = 16 * 1024
DEFAULT_NODE_BUFFER_BYTES = 128 * 1024
DEFAULT_REBUILD_MESSAGES = 50_000
DEFAULT_ROOT_CAP_CHILDREN = 24


@dataclass(frozen=True, slots=True)
class FlushPolicy:
    """How full a writer lets buffers get before it flushes them toward the children.

    The root is rewritten by every commit, so its buffer cap bounds the bytes a commit
    writes; a non-root internal node is rewritten only when a flush reaches it, so its
    cap trades the size of that rewrite against how many messages each leaf rewrite
    absorbs. Each cap is further bounded by the format's budget (whichever is smaller).
    """

    root_buffer_bytes: int = DEFAULT_ROOT_BUFFER_BYTES
    node_buffer_bytes: int = DEFAULT_NODE_BUFFER_BYTES
    #: a root holding more older messages than this (a bulk load's) is merged with the
    #: tree below it and the tree rebuilt bottom-up instead of flushed group by group
    rebuild_messages: int = DEFAULT_REBUILD_MESSAGES
    #: 0: the root cap is `root_buffer_bytes` whatever the root's fan-out. Else a root
    #: with more children than this gets root_buffer_bytes * sqrt(children / this):
    #: each root flush rewrites one child, and the more children share the buffer, the
    #: fewer messages each flush moves (a larger buffer costs every commit its bytes)
    root_cap_children: int = DEFAULT_ROOT_CAP_CHILDREN

    def __post_init__(self) -> None:
        if (
            min(
                self.root_buffer_bytes,
                self.node_buffer_bytes,
                self.rebuild_messages,
                self.root_cap_children,
            )
            < 0
        ):
            raise ValueError("flush policy caps must be >= 0")

    def root_cap(self, budget: int, children: int = 0) -> int:
        cap = self.root_buffer_bytes
        if self.root_cap_children and children > self.root_cap_children:
            cap = int(cap * math.sqrt(children / self.root_cap_children))
        return min(budget, cap)

    def node_cap(self, budget: int) -> int:
        return min(budget, self.node_buffer_bytes)


# What trinityfs writes into the LakehouseDef of a lakehouse it creates, unless told
# otherwise (docs/FORMAT-CHOICES.md, "Node size and flush policy"). Existing lakehouses
# keep what their LakehouseDef says.
NEW_LAKEHOUSE_NODE_FILE_MAX_SIZE_BYTES = 128 * 1024
NEW_LAKEHOUSE_MIN_BUFFER_BYTES = 64 * 1024
NEW_LAKEHOUSE_NODE_FILE_COMPRESSION = "zstd"


def new_lakehouse_options(options: Mapping[str, object]) -> dict[str, object]:
    """LakehouseDef options for a new lakehouse with trinityfs's measured defaults added.

    The node size is 128 KiB, or the key table estimate plus 64 KiB of buffer when a
    large order or long names need more; node files are zstd-compressed. Options the
    caller gives win (and are validated by new_lakehouse_def as usual).
    """
    out = dict(options)
    if "node_file_max_size_bytes" not in out:
        sizes = [
            out.get(name, LAKEHOUSE_DEFAULTS[name])
            for name in ("order", "namespace_name_max_size_bytes", "table_name_max_size_bytes")
        ]
        if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in sizes):
            order, ns_max, table_max = sizes
            estimate = order * (ns_max + table_max + KEY_TABLE_ROW_EXTRA_BYTES)
            out["node_file_max_size_bytes"] = max(
                NEW_LAKEHOUSE_NODE_FILE_MAX_SIZE_BYTES, estimate + NEW_LAKEHOUSE_MIN_BUFFER_BYTES
            )
    properties = out.get("properties", {})
    if isinstance(properties, dict) and PROP_NODE_FILE_COMPRESSION not in properties:
        out["properties"] = {
            **properties,
            PROP_NODE_FILE_COMPRESSION: NEW_LAKEHOUSE_NODE_FILE_COMPRESSION,
        }
    return out
