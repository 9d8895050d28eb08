"""Root node files: finding the latest version, loading a version, the hint and marker.

Roots are named by version and created once (create-if-absent), so they are immutable and
cached like any node; the latest version is found from the hint by galloping forward over
the dense sequence of roots.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from trinityfs.errors import (
    CorruptFileError,
    LakehouseNotFoundError,
    StorageFileNotFoundError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import decode_definition, validate_lakehouse_def
from trinityfs.format.nodefile import decode_node
from trinityfs.format.paths import (
    LATEST_HINT,
    OLDEST_VERSION,
    parse_root_node_file,
    root_node_file,
)
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.storage import Storage
from trinityfs.storage.settle import create_settled
from trinityfs.tree import Node
from trinityfs.tree.reader import version_of

log = logging.getLogger(__name__)

MAX_VERSION = 2**63 - 1


def parse_marker(text: bytes) -> int | None:
    """The version a marker file holds, None when it is not a decimal version."""
    try:
        value = int(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        log.debug("ignoring a malformed marker %r", text[:40])
        return None
    return value if 0 <= value <= MAX_VERSION else None


class RootStore:
    """Versioned roots of one lakehouse in one storage location."""

    def __init__(self, storage: Storage, cached_roots: int = 16):
        self.storage = storage
        self._cached_roots = cached_roots
        self._roots: OrderedDict[int, Node] = OrderedDict()
        self._lock = threading.Lock()

    # -- markers --------------------------------------------------------------------

    def _read_marker(self, location: str) -> int | None:
        """A decimal marker file, or None when missing or malformed.

        Markers are advisory (a reader probes the roots they point to): a malformed one
        is ignored quietly (the next commit rewrites the hint; fsck reports both).
        """
        try:
            text = self.storage.read(location)
        except StorageFileNotFoundError:
            return None
        return parse_marker(text)

    def read_hint(self) -> int | None:
        return self._read_marker(LATEST_HINT)

    def oldest_marker(self) -> int | None:
        """What `_oldest_version.txt` says (None: absent or malformed), unchecked."""
        return self._read_marker(OLDEST_VERSION)

    def oldest_version(self) -> int:
        """The oldest readable version: the marker when its root exists, else the
        oldest root found by listing (a marker that names no root is a lie: a bit
        flip, a restored backup, or an expiration that raced another)."""
        marker = self.oldest_marker() or 0
        if self.exists(marker):
            return marker
        log.debug("%s says %d but that root does not exist", OLDEST_VERSION, marker)
        return self._first_existing_root()

    def marker_is_real(self, marker: int) -> bool:
        """Whether a marker value names an existing root (an expiration wrote it)."""
        return self.exists(marker)

    def write_hint(self, version: int) -> None:
        """Best effort: a stale hint only costs a few more probes."""
        try:
            self.storage.write(LATEST_HINT, str(version).encode(), durable=False)
        except TrinityError as exc:
            log.warning("could not update %s: %s", LATEST_HINT, exc)

    # -- roots ----------------------------------------------------------------------

    def exists(self, version: int) -> bool:
        return self.storage.exists(root_node_file(version))

    def create(self, version: int, data: bytes) -> bool:
        """Create the root of `version`: True if ours landed, False if another one did.

        Unknown outcomes are settled by reading back (`trinityfs.storage.settle`).
        Only `trinityfs.txn.publish` calls this: every root is made there.
        """
        return create_settled(
            self.storage, root_node_file(version), data, f"the root of version {version}"
        )

    def load(self, version: int) -> Node:
        """The root node of `version`; VersionNotFoundError if there is none.

        Roots are immutable once created, so decoded ones are kept (a few, the newest
        being the ones every transaction begins from).
        """
        with self._lock:
            root = self._roots.get(version)
            if root is not None:
                self._roots.move_to_end(version)
                return root
        location = root_node_file(version)
        try:
            data = self.storage.read_immutable(location)
            root = Node.from_file(decode_node(data, None, location), location)
        except StorageFileNotFoundError:
            raise VersionNotFoundError(f"version {version} does not exist") from None
        except CorruptFileError as exc:
            self.storage.forget(location)  # never keep bytes that did not decode
            raise exc.with_version(version) from None
        self.remember(version, root)
        return root

    def remember(self, version: int, root: Node) -> None:
        """Keep a committed root (one this process just created, say) decoded."""
        with self._lock:
            self._roots[version] = root
            while len(self._roots) > self._cached_roots:
                self._roots.popitem(last=False)

    def forget(self, version: int) -> None:
        """Drop a root from the cache (expiration deleted it)."""
        with self._lock:
            self._roots.pop(version, None)

    def load_location(self, location: str) -> Node:
        """A root-shaped node at any location (an export's root, a transaction's root)."""
        data = self.storage.read_immutable(location)
        return Node.from_file(decode_node(data, None, location), location)

    def lakehouse_def(self, root: Node) -> tuple[str, LakehouseDef]:
        location = root.system.get("lakehouse_def")
        version = version_of(root)
        if location is None:
            raise CorruptFileError(root.location or "<root>", "no lakehouse_def row", version)
        try:
            data = self.storage.read_immutable(location)
            ldef = decode_definition(data, LakehouseDef, location)
        except CorruptFileError as exc:
            self.storage.forget(location)
            raise exc.with_version(version) from None
        validate_lakehouse_def(ldef)
        return location, ldef

    def latest_version(self) -> int:
        """Hint (or oldest marker, or 0), then gallop forward to the first missing root.

        Both markers are only starting points: the roots decide. A hint below the
        oldest marker is not used (roots between them may be deleted) unless the
        marker names no root (it lies); when neither names a root, the roots are listed.
        """
        oldest = self.oldest_marker() or 0
        hint = self.read_hint()
        start = None
        if hint is not None and self.exists(hint):
            start = hint if hint >= oldest or not self.exists(oldest) else oldest
        elif self.exists(oldest):
            start = oldest
        if start is None:
            start = self._first_existing_root()
        return self._gallop(start)

    def _gallop(self, known: int) -> int:
        step = 1
        while self.exists(known + step):
            known += step
            step *= 2
        lo, hi = known, known + step  # lo exists, hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.exists(mid):
                lo = mid
            else:
                hi = mid
        return lo

    def _first_existing_root(self) -> int:
        """Last resort when markers point nowhere: list the root files."""
        versions = [
            v
            for entry in self.storage.list("")
            if "/" not in entry.location and (v := parse_root_node_file(entry.location)) is not None
        ]
        if not versions:
            raise LakehouseNotFoundError(f"no lakehouse at {self.storage.url}")
        return min(versions)
