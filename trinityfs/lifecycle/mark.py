"""Reachability: which node, definition and lakehouse definition files some roots use.

Node files are immutable and shared between versions (copy on write), so a node that is
already marked has its whole subtree marked too: the walk stops there. Marking N kept
versions therefore reads each distinct node once, not N trees (see
benchmarks/bench_expire.py for the figures). Each level of the walk is read in parallel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from trinityfs.errors import StorageFileNotFoundError, TrinityError
from trinityfs.format.integrity import check_file_bytes
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.node_decode import decode_node
from trinityfs.format.nodefile import NodeFile
from trinityfs.storage import Storage

DEFAULT_THREADS = 16

# Called with (location, file bytes, decoded node) for every node file the walk reads.
NodeHook = Callable[[str, bytes, NodeFile], None]


class Marker:
    """Accumulates the files reachable from the roots given to it.

    `nodes` holds node file locations (export and transaction roots included, version
    roots not: those are named by version), `definitions` the namespace, table and view
    definition files any marked node points to (key table values and buffered values,
    shadowed ones included: every stored pointer must keep resolving), `lakehouse_defs`
    the lakehouse definition files. With `strict` a file that cannot be read stops the
    walk with its error (expiration must not guess); otherwise the problem is recorded
    in `problems` as (location, referrer, message) and the walk goes on (fsck). A
    missing file is never an error here: nothing can be found below it, so the walk goes
    on and the location is listed in `missing` (callers decide what that means).
    With `uncached` every file is read from storage, never from the storage's cache of
    immutable files (fsck: a file deleted or damaged since this process read it must
    be seen).
    """

    def __init__(
        self,
        storage: Storage,
        *,
        threads: int = DEFAULT_THREADS,
        strict: bool = True,
        on_node: NodeHook | None = None,
        uncached: bool = False,
    ):
        self.storage = storage
        self.threads = max(1, threads)
        self.strict = strict
        self.uncached = uncached
        self.on_node = on_node
        self.nodes: set[str] = set()
        self.definitions: set[str] = set()
        self.lakehouse_defs: set[str] = set()
        self.problems: list[tuple[str, str, str]] = []
        self.missing: list[tuple[str, str]] = []  # (location, referrer)
        self.node_reads = 0
        self._referrer: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- entry points -------------------------------------------------------------

    def mark_root(self, location: str) -> NodeFile | None:
        """Read a version root (not itself marked as a node) and mark its tree."""
        return self.mark_roots([location]).get(location)

    def mark_roots(self, locations: list[str]) -> dict[str, NodeFile]:
        """Read version roots in parallel and mark their trees; returns the roots read."""
        frontier: list[str] = []
        loaded: dict[str, NodeFile] = {}
        for loc, nf in self._load_all(list(locations)):
            if nf is not None:
                loaded[loc] = nf
                self._collect(loc, nf, frontier)
        self._descend(frontier)
        return loaded

    def mark_nodes(self, locations: Iterable[str], referrer: str = "") -> None:
        """Mark node files (export roots, transaction roots, ...) and their subtrees."""
        frontier = []
        for loc in locations:
            if loc not in self.nodes:
                self.nodes.add(loc)
                self._referrer.setdefault(loc, referrer)
                frontier.append(loc)
        self._descend(frontier)

    def mark_reread(self, location: str, referrer: str = "") -> NodeFile | None:
        """Mark a node file whose name is reused (an export's root copy), read from
        storage rather than the cache (`read_reused`), and its subtree; -> the node
        (None when missing: listed in `missing`). Marked again when called again."""
        self.nodes.add(location)
        self._referrer.setdefault(location, referrer)
        try:
            data = read_reused(self.storage, location)
            nf = decode_node(data, None, location)
        except StorageFileNotFoundError:
            with self._lock:
                self.missing.append((location, referrer))
            return None
        except TrinityError as exc:
            if self.strict:
                raise
            with self._lock:
                self.problems.append((location, referrer, str(exc)))
            return None
        with self._lock:
            self.missing = [(loc, by) for loc, by in self.missing if loc != location]
        self.node_reads += 1
        if self.on_node is not None:
            self.on_node(location, data, nf)
        self.mark_loaded(location, nf)
        return nf

    def mark_loaded(self, location: str, nf: NodeFile) -> None:
        """Mark the tree below a node already read (a root the caller loaded)."""
        frontier: list[str] = []
        self._collect(location, nf, frontier)
        self._descend(frontier)

    # -- the walk -----------------------------------------------------------------

    def _descend(self, frontier: list[str]) -> None:
        while frontier:
            following: list[str] = []
            for loc, nf in self._load_all(frontier):
                if nf is not None:
                    self._collect(loc, nf, following)
            frontier = following

    def _collect(self, location: str, nf: NodeFile, following: list[str]) -> None:
        ldef = nf.system.get(KEY_LAKEHOUSE_DEF)
        if ldef is not None:
            self.lakehouse_defs.add(ldef)
            self._referrer.setdefault(ldef, location)
        self.definitions.update(nf.values)
        for _key, value, _txn in nf.buffer:
            if value is not None:
                self.definitions.add(value)
        if not self.strict:
            for value in nf.values:
                self._referrer.setdefault(value, location)
            for _key, value, _txn in nf.buffer:
                if value is not None:
                    self._referrer.setdefault(value, location)
        for child in nf.children or ():
            if child not in self.nodes:
                self.nodes.add(child)
                self._referrer.setdefault(child, location)
                following.append(child)

    def referrer(self, location: str) -> str:
        """A file that points to `location` (for messages), or ''."""
        return self._referrer.get(location, "")

    def _load(self, location: str) -> tuple[str, NodeFile | None]:
        try:
            if self.uncached:
                self.storage.forget(location)
            data = self.storage.read_immutable(location)
            nf = decode_node(data, None, location)
        except StorageFileNotFoundError:
            with self._lock:
                self.missing.append((location, self.referrer(location)))
            return location, None
        except TrinityError as exc:
            if self.strict:
                raise
            with self._lock:
                self.problems.append((location, self.referrer(location), str(exc)))
            return location, None
        if self.on_node is not None:
            self.on_node(location, data, nf)
        return location, nf

    def _load_all(self, locations: list[str]) -> list[tuple[str, NodeFile | None]]:
        self.node_reads += len(locations)
        if len(locations) <= 1 or self.threads == 1:
            return [self._load(loc) for loc in locations]
        with ThreadPoolExecutor(max_workers=min(self.threads, len(locations))) as pool:
            return list(pool.map(self._load, locations))


def read_reused(storage: Storage, location: str) -> bytes:
    """The bytes at `location` read from storage, never from the cache of immutable
    files, and checked like them: for the root copy of a minimal or partial export,
    whose name is the export's (FORMAT.md: ``_export_<name>.arrow``). Dropping an export
    and creating one of the same name replaces that file, so cached bytes would be the
    old export's: readers would serve it and expiration would keep its files instead
    of the new one's. The cached copy is dropped too."""
    storage.forget(location)
    data = storage.read(location)
    check_file_bytes(location, data)
    return data
