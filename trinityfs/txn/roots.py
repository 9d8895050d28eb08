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
    AmbiguousWriteError,
    LakehouseNotFoundError,
    StorageError,
    StorageFileNotFoundError,
    TrinityError,
    UnsupportedStorageError,
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
from trinityfs.tree import Node

log = logging.getLogger(__name__)

MAX_VERSION = 2**63 - 1
READBACK_ATTEMPTS = 5


class RootStore:
    """Versioned roots of one lakehouse in one storage location."""

    def __init__(self, storage: Storage, cached_roots: int = 16):
        self.storage = storage
        self._cached_roots = cached_roots
        self._roots: OrderedDict[int, Node] = OrderedDict()
        self._lock = threading.Lock()

    # -- markers --------------------------------------------------------------------

    def _read_marker(self, location: str) -> int | None:
        """A decimal marker file, or None when missing or malformed (never trusted blindly)."""
        try:
            text = self.storage.read(location)
        except StorageFileNotFoundError:
            return None
        try:
            value = int(text.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError):
            log.warning("ignoring malformed %s", location)
            return None
        return value if 0 <= value <= MAX_VERSION else None

    def read_hint(self) -> int | None:
        return self._read_marker(LATEST_HINT)

    def oldest_version(self) -> int:
        """The guaranteed oldest readable version (0 unless expiration moved it)."""
        return self._read_marker(OLDEST_VERSION) or 0

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

        A create that failed may have landed anyway (an error after the store acted, a
        timeout), and after such an attempt "already exists" may be our own write: both
        are settled by reading the root back. An error stands only when the root is not
        there; AmbiguousWriteError when even reading back cannot tell.
        """
        location = root_node_file(version)
        uncertain = False  # an earlier attempt may land, or have landed
        for _ in range(READBACK_ATTEMPTS):
            failure: StorageError | None = None
            try:
                created = self.storage.create_if_absent(location, data)
            except UnsupportedStorageError:
                raise
            except AmbiguousWriteError as exc:
                log.warning("create of root %d ambiguous (%s): reading back", version, exc)
                uncertain = True
            except StorageError as exc:
                failure = exc
            else:
                if created or not uncertain:
                    return created
            try:
                return self.storage.read(location) == data
            except StorageFileNotFoundError:
                if failure is not None and not uncertain:
                    raise failure from failure.__cause__  # it did not land: the error stands
            except StorageError as exc:
                log.warning("read-back of root %d failed: %s", version, exc)
                uncertain = True
        raise AmbiguousWriteError(
            f"outcome of creating the root of version {version} is unknown after "
            f"{READBACK_ATTEMPTS} read-backs; its files are kept"
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
        except StorageFileNotFoundError:
            raise VersionNotFoundError(f"version {version} does not exist") from None
        root = Node.from_file(decode_node(data, None, location), location)
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
        if location is None:
            from trinityfs.errors import CorruptFileError

            raise CorruptFileError(root.location or "<root>", "no lakehouse_def row")
        ldef = decode_definition(self.storage.read_immutable(location), LakehouseDef, location)
        validate_lakehouse_def(ldef)
        return location, ldef

    def latest_version(self) -> int:
        """Hint (or oldest marker, or 0), then gallop forward to the first missing root."""
        oldest = self.oldest_version()
        hint = self.read_hint()
        start = None
        for candidate in (hint, oldest):
            if candidate is not None and candidate >= oldest and self.exists(candidate):
                start = candidate
                break
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
