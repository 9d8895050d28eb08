"""The path-level object model shared by the trinity:// filesystem and the FUSE mount.

Both front ends show the same tree (grammar and name escaping: `trinityfs.fs.paths`):
version roots selected by a selector (`/` and `/v/latest` the latest version, `/v/<sel>`
any selector of `trinityfs.catalog.selector`), namespaces as directories, tables and
views as files holding their definition as JSON. This module is what a path *means*,
written once: a front end parses its path, asks `PathModel.place` for the resolved
`Place` (the version read, whether it is writable, the reader), and then stats, lists,
reads, writes (with a base version), moves, removes, and reads or sets properties through
the model. Errors are the typed errors of `trinityfs.errors`; each front end maps them
once (errno for fs and FUSE).

What stays in a front end is what only it needs: fsspec's listing dictionaries and
transaction plumbing; the mount's file handles, editors' scratch files and attributes.

Caches (all `trinityfs.lru.LRU`): snapshots by version; resolved selectors that can no
longer change (a version number; a time before the latest version); export and label
resolutions for `label_ttl` seconds (0: resolved on every call); the version that last
changed a definition, by its location (a location is written once).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from trinityfs.catalog import content as content_mod
from trinityfs.catalog.content import Content
from trinityfs.catalog.model import Kind, ObjectRef, VersionInfo
from trinityfs.catalog.primitives import SelectorEntry
from trinityfs.catalog.reader import CatalogReader, paged
from trinityfs.catalog.selector import LATEST, Selection
from trinityfs.catalog.writer import CatalogTransaction, PutMode, PutResult
from trinityfs.errors import (
    InvalidArgumentError,
    NamespaceNotFoundError,
    ObjectNotFoundError,
    VersionNotFoundError,
)
from trinityfs.lru import LRU

if TYPE_CHECKING:
    from trinityfs.catalog.lakehouse import CatalogSnapshot, Lakehouse

NAMESPACE_PAGE = 1000


@dataclass(frozen=True)
class Place:
    """A resolved path: which version it reads, through which reader, and where in it.

    `namespace`/`name` None: the version root (or the namespace itself). `reader` is a
    snapshot, or the running transaction for the latest version inside one. `history`
    is False for an export (its objects have no history in this lakehouse's versions).
    """

    reader: CatalogReader
    version: int
    writable: bool
    selection: Selection | None
    namespace: str | None = None
    name: str | None = None
    in_transaction: bool = False

    @property
    def export(self) -> str | None:
        return None if self.selection is None else self.selection.export

    @property
    def history(self) -> bool:
        return self.export is None

    @property
    def is_root(self) -> bool:
        return self.namespace is None

    @property
    def is_namespace(self) -> bool:
        return self.namespace is not None and self.name is None

    @property
    def is_object(self) -> bool:
        return self.name is not None


@dataclass(frozen=True)
class Stat:
    """What a path holds: a directory (root, namespace) or a file (table, view)."""

    type: Literal["directory", "file"]
    kind: str  # "version", "export", "namespace", "table", "view"
    version: int
    location: str | None = None  # the definition file of a namespace, table or view
    id: str | None = None
    properties: dict[str, str] | None = None  # a namespace's


class PathModel:
    """Resolve, stat, list, read, write, move and remove by path, for one lakehouse."""

    def __init__(self, lake: Lakehouse, *, label_ttl: float = 0.0, snapshots: int = 16):
        self.lake = lake
        self.label_ttl = label_ttl
        self._snapshots: LRU[int, CatalogSnapshot] = LRU(snapshots)
        self._fixed: LRU[str, Selection] = LRU(4096)  # selectors that cannot change
        self._labels: LRU[str, tuple[Selection, CatalogSnapshot, float]] = LRU(256)
        # (created?, namespace, name, definition location) -> VersionInfo
        self._changed: LRU[tuple[bool, str, str | None, str], VersionInfo] = LRU(200_000)
        self._oldest_seen: int | None = None

    # -- resolving ---------------------------------------------------------------------

    def snapshot(self, version: int) -> CatalogSnapshot:
        """The snapshot of a version (cached: a version never changes, but another
        process may expire it, so a kept one is checked as `Lakehouse.at` checks)."""
        hit = self._snapshots.get(version)
        if hit is None:
            return self._snapshots.get_or_load(version, lambda: self.lake.at(version))
        self.lake.check_readable(hit)
        return hit

    def forget(self) -> None:
        """Drop every cached resolution and snapshot."""
        for cache in (self._snapshots, self._fixed, self._labels, self._changed):
            cache.clear()
        self._oldest_seen = None

    def select(self, selector: str) -> tuple[Selection, CatalogSnapshot]:
        """A version selector (not "latest") resolved by `Lakehouse.resolve`, with its
        snapshot; a version number only as `/v` lists it (no leading zeros). Resolutions
        that can no longer change are cached; exports and labels for `label_ttl` seconds."""
        fixed = self._fixed.get(selector)
        if fixed is not None:
            return fixed, self.snapshot(fixed.version)
        if selector[:1] == "0" and selector != "0" and selector.isascii() and selector.isdigit():
            # one name per version: /v/1 is listed; /v/01 would be a second name of every
            # object of version 1 (rsync, diff and caches see two trees)
            raise VersionNotFoundError(
                f"no version directory {selector[:32]!r}: a version is named by its "
                "number without leading zeros, as /v lists it"
            )
        if self.label_ttl > 0:
            hit = self._labels.get(selector)
            if hit is not None and time.monotonic() - hit[2] < self.label_ttl:
                return hit[0], hit[1]
        try:
            selection = self.lake.resolve(selector)
        except InvalidArgumentError as exc:  # e.g. "time:" without a time: no such path
            raise VersionNotFoundError(str(exc)) from exc
        if selection.export is not None:
            snap = self.lake.at(export=selection.export)
        else:
            snap = self.snapshot(selection.version)
        if selection.how == "version" or (
            selection.how == "time" and selection.version < self.lake.latest_version()
        ):
            self._fixed.put(selector, selection)
        elif self.label_ttl > 0:
            self._labels.put(selector, (selection, snap, time.monotonic()))
        return selection, snap

    def place(
        self,
        selector: str | None,
        namespace: str | None = None,
        name: str | None = None,
        *,
        txn: CatalogTransaction | None = None,
        latest: CatalogSnapshot | None = None,
        writable: bool = True,
    ) -> Place:
        """The resolved path `/v/<selector>/<namespace>/<name>` (selector None or
        "latest": the latest version, read through `txn` when one is running, else
        `latest` when the caller keeps its own latest snapshot, else probed now).
        `writable=False` for a read-only front end (a read-only mount)."""
        if selector is None or selector == LATEST:
            if txn is not None:
                return Place(txn, txn.version, writable, None, namespace, name, True)
            snap = latest if latest is not None else self.snapshot(self.lake.latest_version())
            return Place(snap, snap.version, writable, None, namespace, name)
        selection, snap = self.select(selector)
        return Place(snap, selection.version, False, selection, namespace, name)

    def versions(self) -> list[SelectorEntry]:
        """The entries of `/v`: `Lakehouse.selectors()` (each resolves to itself)."""
        return self.lake.selectors()

    # -- reading -----------------------------------------------------------------------

    @staticmethod
    def locate(place: Place) -> tuple[Kind, str] | None:
        """(kind, definition location) of the table or view at `place`, or None."""
        assert place.namespace is not None and place.name is not None
        return place.reader.locate(place.namespace, place.name)

    def exists(self, place: Place) -> Literal["directory", "file"] | None:
        """'directory', 'file' or None by key lookups only (no definition read)."""
        if place.is_root:
            return "directory"
        if place.is_namespace:
            return "directory" if place.reader.namespace_exists(place.namespace) else None
        return "file" if self.locate(place) is not None else None

    def _missing(self, place: Place) -> Exception:
        ns, name = place.namespace, place.name
        if not place.reader.namespace_exists(ns):
            return NamespaceNotFoundError(
                f"namespace {ns!r} does not exist at version {place.version}"
            )
        return ObjectNotFoundError(f"no table or view {ns}.{name} at version {place.version}")

    def stat(self, place: Place) -> Stat:
        """What `place` holds (NotFoundError when nothing); a point lookup, plus one read
        of the namespace definition for its id and properties."""
        if place.is_root:
            return Stat("directory", "export" if place.export else "version", place.version)
        if place.is_namespace:
            msg = place.reader.describe_namespace(place.namespace)
            location = place.reader._namespace_location(place.namespace)
            return Stat(
                "directory",
                "namespace",
                place.version,
                location,
                msg.id,
                dict(msg.properties),
            )
        found = self.locate(place)
        if found is None:
            raise self._missing(place)
        kind, location = found
        return Stat("file", kind, place.version, location)

    def read(self, place: Place) -> tuple[Kind, str, bytes]:
        """(kind, location, JSON file content) of the table or view at `place`."""
        found = self.locate(place)
        if found is None:
            raise self._missing(place)
        kind, location = found
        return (
            kind,
            location,
            self.render(place.reader, kind, place.namespace, place.name, location),
        )

    def render(self, reader: CatalogReader, kind: Kind, ns: str, name: str, location: str) -> bytes:
        """The JSON file of a definition (cached by location: `Lakehouse.render_definition`)."""
        return self.lake.render_definition(reader, ObjectRef(ns, name, kind), location)  # type: ignore[arg-type]

    def definition(self, place: Place) -> tuple[Kind, Any]:
        """(kind, definition message) of the table or view at `place`."""
        found = self.locate(place)
        if found is None:
            raise self._missing(place)
        kind, location = found
        ref = ObjectRef(place.namespace, place.name, kind)  # type: ignore[arg-type]
        return kind, place.reader.read_definition(ref, location)

    @staticmethod
    def namespaces(place: Place) -> Iterator[str]:
        """Namespace names of the version at `place`, a page at a time."""
        return paged(
            lambda after, limit: place.reader.list_namespaces(after, limit), None, NAMESPACE_PAGE
        )

    @staticmethod
    def objects(place: Place) -> list[ObjectRef]:
        """Tables and views of the namespace at `place`, by name."""
        return place.reader.list_objects(place.namespace)

    @staticmethod
    def object_names(place: Place) -> tuple[list[str], list[Kind]]:
        """(names, kinds) of the tables and views of the namespace at `place`, by name,
        as two lists (a listing of many names: no ObjectRef nor tuple per name)."""
        assert place.namespace is not None
        return place.reader.object_name_columns(place.namespace)

    def _oldest(self) -> int:
        """The oldest version, remembered: one that expired since only costs the
        bisection a probe (expired versions hold nothing)."""
        if self._oldest_seen is None:
            self._oldest_seen = self.lake.oldest_version()
        return self._oldest_seen

    def changed(self, place: Place, *, created: bool = False) -> VersionInfo | None:
        """The version that made the namespace or object at `place` what it is there
        (`created`: its latest creation), by `Lakehouse.last_changed` / `created`
        (O(log versions)). None for an export, or for what exists only inside the
        running transaction. NotFoundError when nothing is there."""
        if not place.history or place.is_root:
            return None
        ns, name = place.namespace, place.name
        location = None if place.in_transaction else self.location(place)
        if location is None and not place.in_transaction:
            raise self._missing(place)
        key = (created, ns, name, location or "")
        if location is not None:
            hit = self._changed.get(key)
            if hit is not None and hit.version <= place.version:
                return hit
        ask = self.lake.created if created else self.lake.last_changed
        try:
            info = ask(ns, name, at=place.version, oldest=self._oldest())
        except (NamespaceNotFoundError, ObjectNotFoundError):
            if place.in_transaction:  # created by the running transaction
                return None
            raise
        if location is not None:
            self._changed.put(key, info)
        return info

    @staticmethod
    def location(place: Place) -> str | None:
        """The definition location of the namespace or object at `place` (it changes
        with every committed change of it), or None when nothing is there."""
        if place.name is None:
            if not place.reader.namespace_exists(place.namespace):
                return None
            return place.reader._namespace_location(place.namespace)
        found = PathModel.locate(place)
        return None if found is None else found[1]

    # -- writing (inside a catalog transaction the front end commits) -------------------

    parse = staticmethod(content_mod.parse)  # file content -> Content (ContentError)

    @staticmethod
    def write(
        txn: CatalogTransaction,
        namespace: str,
        name: str,
        content: Content,
        *,
        path: str = "",
        base_version: int | None = None,
        mode: PutMode = "upsert",
        create_namespace: bool = False,
    ) -> PutResult:
        """Write parsed file content (`parse`) as the table or view `namespace.name`
        (`CatalogTransaction.put`: ids kept, an unchanged definition writes nothing,
        another kind replaces the object). Content without a kind keeps the kind of
        what is there (a table when nothing is)."""
        kind = content.kind or txn.object_kind(namespace, name) or "table"
        msg = content_mod.to_message(kind, content.definition, path)
        return txn.put(
            kind,
            namespace,
            name,
            msg,
            base_version=base_version,
            mode=mode,
            create_namespace=create_namespace,
        )

    @staticmethod
    def copy(
        txn: CatalogTransaction, kind: Kind, msg: Any, namespace: str, name: str, *, keep_id: bool
    ) -> PutResult:
        """Put a definition read elsewhere at `namespace.name` (a fresh id unless
        `keep_id`); its namespace is created when missing."""
        if not keep_id:
            msg.id = ""
        return txn.put(kind, namespace, name, msg, create_namespace=True)

    @staticmethod
    def remove(txn: CatalogTransaction, namespace: str, name: str) -> Kind:
        """Drop the table or view `namespace.name`; its kind (NotFoundError if none)."""
        kind = txn.object_kind(namespace, name)
        if kind is None:
            txn._namespace_location(namespace)  # NamespaceNotFoundError
            raise ObjectNotFoundError(f"no table or view {namespace}.{name}")
        txn.drop(kind, namespace, name)
        return kind

    @staticmethod
    def move(
        txn: CatalogTransaction,
        src: tuple[str, str],
        dst: tuple[str, str],
        *,
        make_namespace: bool = False,
    ) -> Kind | None:
        """Rename a table or view keeping its id; an object at `dst` is replaced (mv
        semantics). None when `src == dst`."""
        kind = txn.object_kind(*src)
        if kind is None:
            txn._namespace_location(src[0])
            raise ObjectNotFoundError(f"no table or view {src[0]}.{src[1]}")
        if src == dst:
            return None
        if make_namespace:
            txn.create_namespace(dst[0], exist_ok=True)
        other = txn.object_kind(*dst)
        if other is not None:
            txn.drop(other, *dst)
        txn.rename(kind, *src, *dst)
        return kind

    @staticmethod
    def move_namespace(
        txn: CatalogTransaction,
        old: str,
        new: str,
        *,
        over_empty: bool = False,
        merge: bool = False,
    ) -> None:
        """Rename a namespace with everything in it, keeping every id and its properties
        (`CatalogTransaction.move_namespace`). `over_empty`: an existing empty `new` is
        replaced (rename(2) semantics; NamespaceNotEmptyError if it is not empty).
        `merge`: move into an existing `new`, replacing clashing objects (mv of a tree)."""
        if old == new:
            txn.describe_namespace(old)
            return
        if over_empty and not merge and txn.namespace_exists(new):
            txn.describe_namespace(old)
            txn.drop_namespace(new)
        txn.move_namespace(old, new, merge=merge, replace=merge)

    @staticmethod
    def set_properties(
        txn: CatalogTransaction,
        namespace: str,
        updates: dict[str, str] | None = None,
        removals: list[str] | tuple[str, ...] = (),
    ) -> bool:
        """Set and remove namespace properties; False (nothing written) if unchanged
        (the catalog's rule: CatalogTransaction.set_namespace_properties)."""
        return txn.set_namespace_properties(namespace, updates, removals)


__all__ = ["NAMESPACE_PAGE", "PathModel", "Place", "Stat"]
