"""The catalog semantics every front end shares, as methods of `Lakehouse`.

Which version a selector means (`resolve`, `view`, `selectors`), an upsert against a base
version (`put_object`), when an object last changed or was created (`last_changed`,
`created`), moving a namespace (`move_namespace`), definition files as JSON
(`render_definition`), and the warehouse confinement (`confinement`). Each is written
once here; fs, FUSE, CLI, Iceberg, Spark and REST call these instead of re-deriving them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from trinityfs.catalog.content import RenderCache
from trinityfs.catalog.expired import check_not_expired, load_root
from trinityfs.catalog.history import History
from trinityfs.catalog.locations import LocationPolicy, default_warehouse
from trinityfs.catalog.model import Kind, ObjectRef, VersionInfo
from trinityfs.catalog.selector import (
    LATEST,
    SELECTOR_FORMS,
    Selection,
    export_selector,
    parse_selector,
)
from trinityfs.catalog.writer import Definition, PutMode, PutResult
from trinityfs.errors import CorruptFileError, InvalidArgumentError, VersionNotFoundError
from trinityfs.format.paths import check_version, definition_owner_problem
from trinityfs.tree import lookup

if TYPE_CHECKING:
    from trinityfs.catalog.lakehouse import CatalogSnapshot
    from trinityfs.catalog.writer import CatalogTransaction
    from trinityfs.lifecycle import ExportInfo
    from trinityfs.storage import Storage
    from trinityfs.txn.engine import Engine


@dataclass(frozen=True)
class SelectorEntry:
    """One entry of a versions listing (`/v`): the selector to use and what it reads."""

    selector: str
    how: Literal["latest", "version", "export"]
    version: int | None  # None for an export whose root cannot be read
    export: str | None = None


class FrontEndPrimitives:
    """Mixed into `Lakehouse`; relies on its engine, storage, snapshots and exports."""

    engine: Engine
    storage: Storage
    _history: History
    _renders: RenderCache

    _order: int | None

    if TYPE_CHECKING:  # provided by Lakehouse

        def latest_version(self, *, fresh: bool = False) -> int: ...
        def oldest_version(self) -> int: ...
        def version_at(self, timestamp: datetime | int) -> int: ...
        def version_info(self, version: int) -> VersionInfo: ...
        def exports(self) -> list[ExportInfo]: ...
        def transaction(self, **kwargs: object) -> CatalogTransaction: ...
        def at(
            self,
            version: int | None = None,
            *,
            timestamp: object = None,
            export: str | None = None,
        ) -> CatalogSnapshot: ...

    # -- selectors ------------------------------------------------------------------

    def _export_names(self) -> frozenset[str]:
        ldef = self.engine.snapshot(self.latest_version()).lakehouse_def
        return frozenset(ldef.exported_snapshots)

    def resolve(self, selector: str | int | Selection) -> Selection:
        """The version `selector` means, by the one precedence of
        `trinityfs.catalog.selector`: latest, digits, export:/time:, export name, time.

        VersionNotFoundError for a selector that names nothing readable (a version
        outside oldest..latest, an unknown export, a time before the oldest version).
        """
        if isinstance(selector, Selection):
            return selector
        parsed = parse_selector(selector)
        if parsed.how == "latest":
            return Selection(parsed.text, "latest", self.latest_version(), read_only=False)
        if parsed.how == "version":
            assert parsed.number is not None
            self._check_version(parsed.number)
            return Selection(parsed.text, "version", parsed.number, read_only=True)
        if parsed.how == "export" or (not parsed.time_only and parsed.name in self._export_names()):
            assert parsed.name is not None
            snap = self.at(export=parsed.name)
            return Selection(parsed.text, "export", snap.version, True, export=parsed.name)
        if parsed.millis is not None:
            version = self.version_at(parsed.millis)
            return Selection(parsed.text, "time", version, True, millis=parsed.millis)
        raise VersionNotFoundError(f"{parsed.text!r:.200} is not {SELECTOR_FORMS}")

    def _check_version(self, version: int) -> None:
        check_not_expired(version, self.oldest_version)
        load_root(self.engine.roots, version)  # beyond the latest, or lost

    def view(self, selector: str | int | Selection) -> CatalogSnapshot:
        """A read-only view of what `selector` resolves to, with `.selection` set."""
        selection = self.resolve(selector)
        if selection.export is not None:
            snap = self.at(export=selection.export)
        else:
            snap = self.at(selection.version)
        snap.selection = selection
        return snap

    def selectors(self) -> list[SelectorEntry]:
        """The entries of a versions listing: oldest..latest, ``latest``, then every export
        spelled so that it resolves to itself (`export_selector`): no entry twice."""
        oldest, latest = self.oldest_version(), self.latest_version()
        out = [SelectorEntry(str(v), "version", v) for v in range(oldest, latest + 1)]
        out.append(SelectorEntry(LATEST, "latest", latest))
        for info in self.exports():
            out.append(SelectorEntry(export_selector(info.name), "export", info.version, info.name))
        return out

    # -- history of one object --------------------------------------------------------

    def location_at(self, version: int, key: str) -> str | None:
        """The definition location `key` holds at `version` (VersionedKeys protocol):
        one root load (cached) and one tree descent, no LakehouseDef decoding."""
        check_version(version)
        if not isinstance(key, str):
            raise InvalidArgumentError(f"key must be a str, got {key!r}")
        if self._order is None:  # the order of a lakehouse never changes
            self._order = self.engine.snapshot(self.latest_version()).lakehouse_def.order
        return lookup(self.engine.nodes(self._order), self.engine.roots.load(version), key)

    def read_file(self, location: str) -> bytes:
        return self.storage.read_immutable(location)

    def _located(
        self, namespace: str, name: str | None, at: int | None
    ) -> tuple[Kind, str, str, int]:
        version = self.latest_version() if at is None else check_version(at)
        # the key codec depends only on fields of the LakehouseDef that never change after
        # creation (order, name limits): built once, not a snapshot per call
        keys = getattr(self, "_key_codec", None)
        if keys is None:
            keys = self._key_codec = self.at(version).keys
        kind, key, location = self._history.key_and_location(keys, version, namespace, name)
        return kind, key, location, version

    def last_changed(
        self,
        namespace: str,
        name: str | None = None,
        *,
        at: int | None = None,
        oldest: int | None = None,
    ) -> VersionInfo:
        """The version (and its time) whose commit made the namespace or object what it is
        at version `at` (latest by default): O(log versions) lookups, see catalog/history.py.

        `oldest`: a remembered oldest version (saves reading the marker per call); one
        that expired since is safe: expired versions hold nothing for the bisection.
        NamespaceNotFoundError / ObjectNotFoundError when it does not exist at `at`.
        """
        _kind, key, location, version = self._located(namespace, name, at)
        lo = self.oldest_version() if oldest is None else _check_oldest(oldest, version)
        found = self._history.last_changed(key, location, lo, version)
        return self.version_info(found)

    def created(
        self,
        namespace: str,
        name: str | None = None,
        *,
        at: int | None = None,
        oldest: int | None = None,
    ) -> VersionInfo:
        """The version (and its time) of the latest creation, under this name, of the
        namespace or object that exists at `at`; replaces keep it, a drop and re-create
        or a rename moves it. `oldest` as for `last_changed`."""
        kind, key, location, version = self._located(namespace, name, at)
        lo = self.oldest_version() if oldest is None else _check_oldest(oldest, version)
        found = self._history.created(kind, key, location, lo, version)
        return self.version_info(found)

    # -- writes ---------------------------------------------------------------------

    def put_object(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        definition: Definition,
        *,
        base_version: int | None = None,
        mode: PutMode = "upsert",
        create_namespace: bool = False,
    ) -> PutResult:
        """`CatalogTransaction.put` as one commit; the result carries the new version
        (None when nothing changed)."""
        with self.transaction() as txn:
            result = txn.put(
                kind,
                namespace,
                name,
                definition,
                base_version=base_version,
                mode=mode,
                create_namespace=create_namespace,
            )
        version = None if result.action == "unchanged" else txn.txn.committed_version
        return replace(result, version=version)

    def move_namespace(
        self, namespace: str, new_namespace: str, *, merge: bool = False, replace: bool = False
    ) -> int:
        """`CatalogTransaction.move_namespace` as one commit; returns the new version."""
        with self.transaction() as txn:
            txn.move_namespace(namespace, new_namespace, merge=merge, replace=replace)
        return txn.txn.committed_version if txn.txn.committed_version is not None else txn.version

    # -- definitions as files ---------------------------------------------------------

    def render_definition(self, reader: CatalogSnapshot, ref: ObjectRef, location: str) -> bytes:
        """The JSON file content of a table or view (`trinityfs.catalog.content`), cached
        by definition location: those files never change."""
        if ref.kind == "namespace":
            raise InvalidArgumentError("namespaces are directories: they render no file")
        # The cache is keyed by location: a key pointing at another object's file must be
        # refused before a render of that file cached for its owner is served.
        problem = definition_owner_problem(location, ref.kind, ref.namespace, ref.name)
        if problem is not None:
            raise CorruptFileError(location, problem, reader.version)
        storage = getattr(reader, "storage_url", self.storage.url)
        return self._renders.get(
            storage, ref.kind, location, lambda: reader.read_definition(ref, location)
        )

    def iter_definitions(
        self, reader: CatalogSnapshot, namespace: str
    ) -> Iterator[tuple[ObjectRef, bytes]]:
        """Every table and view of a namespace with its rendered file, in name order."""
        for ref in reader.iter_objects(namespace):
            location = reader.object_location(ref.kind, namespace, ref.name or "")
            if location is not None:
                yield ref, self.render_definition(reader, ref, location)

    # -- confinement ------------------------------------------------------------------

    def default_warehouse(self) -> str:
        return default_warehouse(self.storage.url)

    def confinement(
        self, warehouse: str | None = None, allowed: str | tuple[str, ...] | None = None
    ) -> LocationPolicy:
        """Where table files may live (`trinityfs.catalog.locations`): `warehouse`
        (default <root>/warehouse) plus the `allowed` prefixes."""
        return LocationPolicy.for_lakehouse(self.storage.url, warehouse, allowed)


def _check_oldest(oldest: object, at: int) -> int:
    """A caller's remembered oldest version: a version number not above `at` (the
    bisection answers no version below it, so one above `at` would answer `at`)."""
    check_version(oldest)
    if oldest > at:  # type: ignore[operator]
        raise InvalidArgumentError(f"oldest ({oldest}) is above the version asked about ({at})")
    return oldest  # type: ignore[return-value]


__all__ = ["FrontEndPrimitives", "SelectorEntry"]
