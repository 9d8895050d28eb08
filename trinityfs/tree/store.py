"""Loading and writing node files, with a bounded cache of decoded nodes.

Node files are immutable, so a decoded node can be shared by every reader and every
version that points to it; the cache keeps warm lookups free of storage requests and of
Arrow decoding.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from trinityfs.format.nodefile import decode_node, encode_node
from trinityfs.format.paths import new_node_location
from trinityfs.storage import Storage
from trinityfs.tree.node import Node

DEFAULT_CACHED_NODES = 4096


class NodeStore:
    """Reads and writes the node files of one lakehouse (one tree order)."""

    def __init__(self, storage: Storage, order: int, cached_nodes: int = DEFAULT_CACHED_NODES):
        self.storage = storage
        self.order = order
        self._cached_nodes = cached_nodes
        self._cache: OrderedDict[str, Node] = OrderedDict()
        self._lock = threading.Lock()
        self.nodes_decoded = 0

    def load(self, location: str) -> Node:
        """The committed node at `location` (shared; never mutate it)."""
        with self._lock:
            node = self._cache.get(location)
            if node is not None:
                self._cache.move_to_end(location)
                return node
        data = self.storage.read_immutable(location)
        node = Node.from_file(decode_node(data, self.order, location), location)
        with self._lock:
            self.nodes_decoded += 1
            self._cache[location] = node
            while len(self._cache) > self._cached_nodes:
                self._cache.popitem(last=False)
        return node

    def resolve(self, ref: str | Node) -> Node:
        return ref if isinstance(ref, Node) else self.load(ref)

    def write_new_nodes(
        self, root: Node, created_at_millis: int | None = None, compression: str | None = None
    ) -> list[str]:
        """Give every new (uncommitted) node below `root` a location and write it.

        Children are encoded before their parents so that every pointer is known; the
        files themselves are written in parallel. The root itself is not written (its
        name is the version, created by the commit). Returns the locations written.
        """
        pending: list[tuple[str, bytes]] = []
        written = _new_nodes_bottom_up(root)
        stamp = str(time.time_ns() // 1_000_000 if created_at_millis is None else created_at_millis)
        for node in written:
            node.system = {"created_at_millis": stamp}
            location = new_node_location()
            data = encode_node(node.to_file(), self.order, compression=compression)
            pending.append((location, data))
            node.location = location
        self._write_all(pending)
        for node in [*written, root]:
            _detach_children(node)
        for node in written:
            self.remember(node)
        return [location for location, _ in pending]

    def _write_all(self, files: list[tuple[str, bytes]]) -> None:
        self.storage.write_immutable_many(dict(files))

    def remember(self, node: Node) -> None:
        """Put a node this process just wrote into the decoded cache."""
        if node.location is None:
            return
        with self._lock:
            self._cache[node.location] = node
            while len(self._cache) > self._cached_nodes:
                self._cache.popitem(last=False)


def _detach_children(node: Node) -> None:
    """Replace child objects by their locations so cached nodes do not pin subtrees."""
    if node.children is not None:
        node.children = [c if isinstance(c, str) else c.location or c for c in node.children]


def _new_nodes_bottom_up(root: Node) -> list[Node]:
    """New nodes strictly below `root`, children before parents."""
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            if node is not root:
                order.append(node)
            continue
        stack.append((node, True))
        for child in node.children or ():
            if isinstance(child, Node) and child.location is None:
                stack.append((child, False))
    return order
