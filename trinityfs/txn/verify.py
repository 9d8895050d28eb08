"""Whole-tree verification of commits: the opt-in `verify="tree"` mode.

By default a commit verifies what it reads and carries the rest by content-hash name
(docs/FORMAT-CHOICES.md, "What a commit verifies"). With `verify="tree"` a commit
also verifies, before anything is written, every file the tree it builds on reaches:
every node file, every definition file (shadowed buffer values included: the tree
still points to them) and the lakehouse definition. Its new version then reaches only
verified files and the files it wrote itself, so no commit lands on top of a tree
that fails verification.

The cost is kept to the files this process has not verified yet: a `TreeVerifier`
(one per `Lakehouse`, shared by its threads) remembers the names it verified. That is
sound because trinityfs names carry a hash of the content and files are immutable: a
name verified once names the same bytes forever, and a node verified once has a
subtree that was verified with it (its rows list its children's names). Files this
process wrote are verified by construction (their names were computed from the bytes
written). So the first commit of a process reads the whole tree (O(tree)), later ones
only the files other writers added since (O(new files)). The residual: a file that
rots in storage after this process verified or wrote it is not read again by this
process's commits (fsck, `trinityfs fsck`, and every read still detect it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from google.protobuf.message import Message

from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    LakehouseNotFoundError,
    StorageFileNotFoundError,
)
from trinityfs.format.definitions import decode_definition
from trinityfs.format.integrity import has_content_name
from trinityfs.format.keys import TYPE_NAMESPACE, TYPE_TABLE, TYPE_VIEW, decode_type_id
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef, TableDef, ViewDef
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore

if TYPE_CHECKING:
    from trinityfs.txn.engine import Engine
    from trinityfs.txn.snapshot import Snapshot

#: what a commit verifies: "reads" (the default: what it reads) or "tree" (everything
#: the tree it builds on reaches, before it writes anything)
VERIFY_READS = "reads"
VERIFY_TREE = "tree"
VERIFY_MODES = (VERIFY_READS, VERIFY_TREE)
# Past this many remembered names the verifier starts over (~170 bytes each; costs
# re-reads, never correctness).
MAX_REMEMBERED = 2_000_000
THREADS = 16

_DEFINITION_TYPES: dict[int, type[Message]] = {
    TYPE_NAMESPACE: NamespaceDef,
    TYPE_TABLE: TableDef,
    TYPE_VIEW: ViewDef,
}
_R = TypeVar("_R")


def parse_verify_mode(value: object, source: str = "the verify option") -> str:
    """`value` as one of VERIFY_MODES; InvalidArgumentError naming `source` otherwise."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in VERIFY_MODES:
        raise InvalidArgumentError(
            f"{source} is {value!r}: use 'reads' (verify what a commit reads, the default) "
            "or 'tree' (verify every file of the tree before each commit)"
        )
    return str(text)


@dataclass
class VerifyStats:
    """What one verification did: files read and verified now, files skipped because
    this process verified them before, and files whose legacy names carry no hash
    (checked structurally only)."""

    files_read: int = 0
    files_known: int = 0
    unhashed: int = 0


class TreeVerifier:
    """Verifies the files a tree reaches, remembering verified names (thread-safe)."""

    def __init__(self, storage: Storage, threads: int = THREADS):
        self.storage = storage
        self.threads = threads
        self._lock = threading.Lock()
        # node names whose whole subtree was verified, and definition names verified
        self._verified: set[str] = set()
        self.files_read = 0  # total over this verifier's life (benchmarks, tests)

    def __len__(self) -> int:
        with self._lock:
            return len(self._verified)

    def remember_written(self, locations: list[str]) -> None:
        """Node files a commit wrote right after `verify` passed for the tree it built
        on: verified by construction (each name was computed from the bytes written,
        and their subtrees are that verified tree's files and the commit's own)."""
        with self._lock:
            self._verified.update(locations)

    def forget(self) -> None:
        """Forget every verified name: the next commit reads the whole tree again."""
        with self._lock:
            self._verified = set()

    def verify(
        self,
        root: Node,
        nodes: NodeStore,
        lakehouse_def: str,
        *,
        version: int,
        changes: Mapping[str, str | None] | None = None,
    ) -> VerifyStats:
        """Verify every committed file below `root` (nodes and the definitions they point
        to), the lakehouse definition `lakehouse_def` and the definitions `changes`
        (key -> location, None when deleted: what a commit adds to the tree).

        Raises CorruptFileError naming the first bad file and `version` (the version
        whose tree reaches it); a missing file is a CorruptFileError too. Every file
        verified before a failure stays remembered, so a retry after the file is
        restored reads only what was not verified."""
        with self._lock:
            done = frozenset(self._verified)  # a snapshot: others may add meanwhile
        stats = VerifyStats()
        failures: dict[str, CorruptFileError] = {}
        good: list[str] = []

        def check_definitions(found: Mapping[str, type[Message]]) -> None:
            todo = sorted(loc for loc in found if loc not in done and loc not in failures)
            stats.files_known += len(found) - len(todo)
            for loc, error in self._map(lambda loc: self._definition(loc, found[loc]), todo):
                stats.files_read += 1
                stats.unhashed += not has_content_name(loc)
                if error is None:
                    good.append(loc)
                else:
                    failures[loc] = error

        # in-memory nodes (the root, nodes a commit built) are walked, not read
        found: dict[str, type[Message]] = {lakehouse_def: LakehouseDef}
        if changes:
            added = Node(keys=[], values=[], children=None)
            added.keys = [k for k, v in changes.items() if v is not None]
            added.values = [v for v in changes.values() if v is not None]
            _definitions_of(added, found, failures)
        frontier: list[str] = []
        stack = [root]
        while stack:
            node = stack.pop()
            _definitions_of(node, found, failures)
            for child in node.children or ():
                (stack if isinstance(child, Node) else frontier).append(child)
        levels: list[list[str]] = []
        children: dict[str, list[str]] = {}
        node_definitions: dict[str, list[str]] = {}
        while frontier:
            todo = sorted({loc for loc in frontier if loc not in done})
            stats.files_known += len(set(frontier)) - len(todo)
            frontier = []
            level_found: dict[str, type[Message]] = {}
            loaded = self._map(nodes.load, todo)
            stats.files_read += len(todo)
            level: list[str] = []
            for loc, node in loaded:
                stats.unhashed += not has_content_name(loc)
                if isinstance(node, CorruptFileError):
                    failures[loc] = node
                    continue
                level.append(loc)
                mine: dict[str, type[Message]] = {}
                _definitions_of(node, mine, failures)
                node_definitions[loc] = list(mine)
                level_found.update(mine)
                kids = [c for c in node.children or () if isinstance(c, str)]
                children[loc] = kids
                frontier.extend(kids)
            levels.append(level)
            check_definitions(level_found)
        check_definitions(found)

        # a node is verified when its file, its definitions and its whole subtree are
        bad = set(failures)
        complete: set[str] = set()
        for level in reversed(levels):
            for loc in level:
                if (
                    loc not in bad
                    and not any(d in bad for d in node_definitions[loc])
                    and all(c in done or c in complete for c in children[loc])
                ):
                    complete.add(loc)
        with self._lock:
            if len(self._verified) + len(complete) + len(good) > MAX_REMEMBERED:
                self._verified = set()
            self._verified.update(complete)
            self._verified.update(good)
            self.files_read += stats.files_read
        if failures:
            first = sorted(failures)[0]
            error = failures[first]
            others = len(failures) - 1
            more = f"; {others} more damaged file(s) reachable" if others else ""
            raise CorruptFileError(
                error.path,
                f"{error.problem} (whole-tree verification refused the commit{more}; "
                "nothing was committed: restore the file and retry)",
                version,
            ) from None
        return stats

    def _definition(self, location: str, cls: type[Message]) -> None:
        data = self.storage.read_immutable(location)
        try:
            decode_definition(data, cls, location)
        except CorruptFileError:
            self.storage.forget(location)
            raise

    def _map(
        self, func: Callable[[str], _R], locations: list[str]
    ) -> list[tuple[str, _R | CorruptFileError]]:
        """(location, result or the CorruptFileError naming it), in parallel."""

        def one(loc: str) -> tuple[str, _R | CorruptFileError]:
            try:
                return loc, func(loc)
            except CorruptFileError as exc:
                return loc, exc
            except StorageFileNotFoundError:
                return loc, CorruptFileError(loc, "the file is missing (the tree points to it)")

        if len(locations) <= 1 or self.threads <= 1:
            return [one(loc) for loc in locations]
        with ThreadPoolExecutor(max_workers=min(self.threads, len(locations))) as pool:
            return list(pool.map(one, locations))


def _definitions_of(
    node: Node, found: dict[str, type[Message]], failures: dict[str, CorruptFileError]
) -> None:
    """Add the definition files `node` points to (key values and buffered messages)."""
    where = node.location or "the root being built"
    pairs = [*zip(node.keys, node.values, strict=False)]
    pairs.extend((k, v) for k, (v, _txn) in node.buffer.items() if v is not None)
    for key, location in pairs:
        try:
            cls = _DEFINITION_TYPES[decode_type_id(key[:4])]
        except (InvalidArgumentError, KeyError):
            failures.setdefault(where, CorruptFileError(where, f"a key of unknown kind {key!r}"))
            continue
        found.setdefault(location, cls)


def verify_before_writing(engine: Engine, base: Snapshot) -> None:
    """Before a transaction writes anything (so a refused commit leaves no file behind):
    with whole-tree verification, verify the tree it builds on; where a stat is cheap
    (local disk), check that the root of its base version is still there and still the
    file this process read or wrote (`RootStore.root_unchanged`): another file there
    means the lakehouse was created again in place, whatever its number of versions."""
    if engine.tree_verifier is not None:
        engine.tree_verifier.verify(
            base.root, base.nodes, base.lakehouse_def_location, version=base.version
        )
    if not engine.storage.backend.cheap_exists:
        return
    unchanged = engine.roots.root_unchanged(base.version)
    if unchanged is None:
        _base_root_gone(engine, base.version)
    elif not unchanged:
        raise LakehouseNotFoundError(
            f"the root of version {base.version}, which this commit builds on, is another "
            f"file now: {engine.storage.url} holds another lakehouse (it was removed or "
            "replaced while open: open it again); nothing was committed"
        )


def _base_root_gone(engine: Engine, version: int) -> None:
    """The root of `version`, the base of a commit, is gone. Fine when later versions
    exist (expiration removed it after others committed: the commit loses its race and
    moves onto the latest, as usual); otherwise the lakehouse this process remembers was
    removed, or replaced inside the same directory (a lakehouse created again there), and
    a root built on the remembered tree would make the one there now unreadable."""
    try:
        latest = engine.roots.latest_from_markers()
    except LakehouseNotFoundError:
        latest = None
    if latest is not None and latest > version:
        return
    now = "holds no version" if latest is None else f"says its latest version is {latest}"
    raise LakehouseNotFoundError(
        f"the root of version {version}, which this commit builds on, is gone and "
        f"{engine.storage.url} {now}: the lakehouse was removed or replaced while open "
        "(open it again); nothing was committed"
    )
