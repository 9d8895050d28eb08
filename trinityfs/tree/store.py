"""Loading and writing node files, with a bounded cache of decoded nodes.

Node files are immutable, so a decoded node can be shared by every reader and every
version that points to it; the cache keeps warm lookups free of storage requests and of
Arrow decoding.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from trinityfs.errors import CorruptFileError
from trinityfs.format.keys import KEY_CREATED_AT_MILLIS
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import new_node_location
from trinityfs.lru import LRU
from trinityfs.storage import Storage
from trinityfs.tree.node import Node

DEFAULT_CACHED_NODES = 4096
# Locations whose whole subtree this process verified; past this many it starts over
# (costs re-reads, never correctness).
MAX_VERIFIED_SUBTREES = 1_000_000
VERIFY_THREADS = 16


class NodeStore:
    """Reads and writes the node files of one lakehouse (one tree order)."""

    def __init__(self, storage: Storage, order: int, cached_nodes: int = DEFAULT_CACHED_NODES):
        self.storage = storage
        self.order = order
        self._cache: LRU[str, Node] = LRU(cached_nodes)
        self._lock = threading.Lock()
        self._verified_subtrees: set[str] = set()
        self.nodes_decoded = 0

    def load(self, location: str) -> Node:
        """The committed node at `location` (shared; never mutate it)."""
        node = self._cache.get(location)
        if node is not None:
            return node
        data = self.storage.read_immutable(location)
        try:
            node = Node.from_file(decode_node(data, self.order, location), location)
        except CorruptFileError:
            self.storage.forget(location)  # never keep bytes that did not decode
            raise
        with self._lock:
            self.nodes_decoded += 1
        self._cache.put(location, node)
        return node

    def cached(self, location: str) -> Node | None:
        """The decoded node at `location` if this process still holds it (no read)."""
        return self._cache.get(location)

    def resolve(self, ref: str | Node) -> Node:
        return ref if isinstance(ref, Node) else self.load(ref)

    def verify_below(self, root: Node) -> int:
        """Verify every committed node file reachable from `root` (CorruptFileError or
        StorageFileNotFoundError naming the first bad one); returns the files read.

        Each file is read and verified once per store: a subtree verified before is
        skipped (node files are immutable and named by their content), so after the
        first commit of a process this reads only the nodes other writers added since.
        """
        frontier: list[str] = []
        stack = [root]
        while stack:  # new nodes of this commit live in memory: look below them
            node = stack.pop()
            for child in node.children or ():
                (stack if isinstance(child, Node) else frontier).append(child)
        visited: list[str] = []
        seen: set[str] = set()  # a node that names an ancestor is read once, not forever
        reads = 0
        with self._lock:
            done = self._verified_subtrees
        while frontier:
            todo = sorted({loc for loc in frontier if loc not in done and loc not in seen})
            seen.update(todo)
            if not todo:
                break
            reads += len(todo)
            if len(todo) == 1:
                loaded = [self.load(todo[0])]
            else:
                with ThreadPoolExecutor(max_workers=min(VERIFY_THREADS, len(todo))) as pool:
                    loaded = list(pool.map(self.load, todo))
            visited.extend(todo)
            frontier = [c for node in loaded for c in node.children or () if isinstance(c, str)]
        with self._lock:
            if len(self._verified_subtrees) + len(visited) > MAX_VERIFIED_SUBTREES:
                self._verified_subtrees = set()
            self._verified_subtrees.update(visited)
        return reads

    def write_new_nodes(
        self, root: Node, created_at_millis: int | None = None, compression: str | None = None
    ) -> list[str]:
        """Give every new (uncommitted) node below `root` a location and write it.

        Committed subtrees are carried by their content-hash names, not re-read: what
        the commit read (the nodes it rewrote) was verified when loaded; see
        docs/FORMAT-CHOICES.md "What a commit verifies". Children are encoded before
        their parents so that every pointer is known; the files themselves are written
        in parallel. The root itself is not written (its name is the version, created by
        the commit). Returns the locations written.
        """
        written = _new_nodes_bottom_up(root)
        if not written:  # most commits: the root alone is new
            _detach_children(root)
            return []
        pending: list[tuple[str, bytes]] = []
        stamp = str(time.time_ns() // 1_000_000 if created_at_millis is None else created_at_millis)
        for node in written:
            node.system = {KEY_CREATED_AT_MILLIS: stamp}
            data = encode_node(node.to_file(), self.order, compression=compression)
            location = new_node_location(data)
            pending.append((location, data))
            node.location = location
        self._write_all(pending)
        for node in [*written, root]:
            _detach_children(node)
        for node in written:
            self.remember(node)
        return [location for location, _ in pending]

    def node_emitter(
        self, compression: str | None = None, created_at_millis: int | None = None
    ) -> NodeEmitter:
        """An `emit` for `TreeWriter`: writes each node as the bottom-up rebuild cuts it."""
        return NodeEmitter(self, compression, created_at_millis)

    def _write_all(self, files: list[tuple[str, bytes]]) -> None:
        self.storage.write_immutable_many(dict(files))

    def remember(self, node: Node) -> None:
        """Put a node this process just wrote into the decoded cache."""
        if node.location is not None:
            self._cache.put(node.location, node)


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


#: nodes an emitter writes together (one sync per batch on local disk)
EMIT_BATCH_FILES = 64


class NodeEmitter:
    """Writes the nodes a bottom-up rebuild finishes, in batches, as they are cut.

    Each node gets its location (content-hash name) at once, so its parent can point to
    it and the node itself can be dropped: memory stays O(batch + depth * order)
    whatever the size of the tree. `flush` writes the last batch; `written` lists every
    location written. The nodes are kept in neither the decoded cache nor the bytes
    cache (a rebuild writes the whole tree: 60 MB at 1,000,000 tables).
    """

    def __init__(self, store: NodeStore, compression: str | None, created_at_millis: int | None):
        self.store = store
        self.compression = compression
        self.stamp = str(
            time.time_ns() // 1_000_000 if created_at_millis is None else created_at_millis
        )
        self.written: list[str] = []
        self._pending: list[tuple[str, bytes]] = []

    def __call__(self, node: Node) -> str:
        _detach_children(node)  # children of a cut node were emitted before it
        node.system = {KEY_CREATED_AT_MILLIS: self.stamp}
        data = encode_node(node.to_file(), self.store.order, compression=self.compression)
        location = new_node_location(data)
        node.location = location
        self._pending.append((location, data))
        if len(self._pending) >= EMIT_BATCH_FILES:
            self.flush()
        return location

    def flush(self) -> None:
        """Write (durably) the nodes emitted since the last flush."""
        if self._pending:
            self.store._write_all(self._pending)
            for location, _ in self._pending:
                self.written.append(location)
                self.store.storage.forget(location)  # nor in the bytes cache: read if needed
            self._pending = []
