"""The REST catalog's state-free core: pins, snapshots, table loading, namespaces.

A `RestCatalogService` holds nothing between requests but caches whose keys include the
catalog version they were read at (a version never changes once committed), so any
number of servers, direct Python writers and Spark jobs can share one lakehouse. Reads go
through the catalog API at one snapshot per request; every change goes through
`TrinityCatalog` (one catalog transaction, compare-and-swap on the table's pointer).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyiceberg.exceptions import NoSuchIcebergTableError, NoSuchNamespaceError
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table.metadata import TableMetadata

from trinityfs.errors import InvalidNameError, NotFoundError, VersionNotFoundError
from trinityfs.iceberg import TrinityCatalog
from trinityfs.iceberg.objects import iceberg_names, iceberg_page, read_threads
from trinityfs.iceberg.pointer import metadata_location_of
from trinityfs.lru import LRU
from trinityfs.rest import requests as rq
from trinityfs.rest.errors import RestError, bad_request, forbidden, not_found, validation_detail
from trinityfs.rest.locations import LocationPolicy
from trinityfs.rest.selector import (
    LATEST,
    NoSuchWarehouseError,
    Pin,
    resolve,
    unreadable,
    version_prefix,
)

if TYPE_CHECKING:
    from trinityfs.catalog import CatalogSnapshot


# Table properties a client may not set: they name Python classes the server would import
# (py-io-impl, write.py-location-provider.impl, ...).
def is_class_property(key: str) -> bool:
    return key.endswith("impl")


# Table properties that choose where the server writes metadata (or clients write data).
PATH_PROPERTIES = (
    "write.metadata.path",
    "write.data.path",
    "write.object-storage.path",
    "write.folder-storage.path",
)


@dataclass(frozen=True)
class LoadedTable:
    """A table as read at one catalog version, with its LoadTableResult body."""

    namespace: str
    name: str
    metadata_location: str
    metadata: TableMetadata
    body: bytes
    etag: str


class RestCatalogService:
    """What the HTTP layer calls; raises RestError or the errors `to_rest_error` maps."""

    def __init__(
        self,
        catalog: TrinityCatalog,
        policy: LocationPolicy,
        *,
        cache_entries: int = 4096,
        table_config: dict[str, str] | None = None,
    ):
        self.catalog = catalog
        self.lake = catalog.lakehouse
        self.policy = policy
        self.table_config = dict(table_config or {})
        self._config_json = json.dumps(self.table_config).encode()
        self.tables: LRU[tuple, LoadedTable] = LRU(cache_entries)
        self._pins: LRU[tuple[int, str], Pin] = LRU(256)

    # -- which version a request reads ---------------------------------------------

    def pin(self, selector: str) -> Pin:
        """The version a URL prefix names (404 NoSuchWarehouseException when none)."""
        if selector == LATEST:
            return Pin(None, LATEST)
        head, _, label = selector.partition("/")
        try:
            number = version_prefix(label) if head == "v" else None
            if number is not None:
                return Pin(number, selector)  # readability is checked on reading
            key = (self.lake.latest_version(), selector)
            hit = self._pins.get(key)
            if hit is None:
                hit = resolve(self.lake, selector, prefix=True)
                self._pins.put(key, hit)
            return hit
        except NoSuchWarehouseError as exc:
            raise not_found("NoSuchWarehouseException", str(exc)) from None

    def snapshot(self, pin: Pin) -> CatalogSnapshot:
        try:
            if pin.export is not None:
                return self.lake.at(export=pin.export)
            return self.lake.at(pin.version)
        except VersionNotFoundError as exc:
            if pin.export is not None or pin.version is None:
                raise not_found(
                    "NoSuchWarehouseException",
                    f"prefix {pin.prefix!r}: catalog version {pin.version} is not readable: {exc}",
                ) from None
            why = unreadable(self.lake, pin.version, pin.prefix, exc)
            if isinstance(why, NoSuchWarehouseError):
                raise not_found("NoSuchWarehouseException", str(why)) from None
            raise why from None

    @staticmethod
    def require_writable(pin: Pin) -> None:
        if pin.read_only:
            raise forbidden(
                f"prefix {pin.prefix!r} reads catalog version {pin.version} and is read-only: "
                "changes go to the latest version (warehouse 'latest', prefix 'latest')"
            )

    # -- config ---------------------------------------------------------------------

    def config(self, warehouse: str | None, endpoints: list[str]) -> dict[str, Any]:
        try:
            pin = resolve(self.lake, warehouse, fix_time=True)
        except NoSuchWarehouseError as exc:
            raise not_found("NoSuchWarehouseException", str(exc)) from None
        if pin.version is not None and pin.export is None:
            self.snapshot(pin)  # 404 now rather than on every later request
        return {
            "defaults": {},
            "overrides": {"prefix": pin.prefix},
            "endpoints": endpoints,
        }

    # -- tables (reads) -------------------------------------------------------------

    def load_table(self, pin: Pin, ns: str, name: str, snapshots: str = "all") -> LoadedTable:
        if snapshots not in ("all", "refs"):
            raise bad_request(f"snapshots must be 'all' or 'refs', not {snapshots!r}")
        snap = self.snapshot(pin)
        key = (snap.version, pin.export, ns, name, snapshots)
        hit = self.tables.get(key)
        if hit is not None:
            return hit
        location = self.metadata_location(snap, ns, name)
        # a pointer set through another front end is checked before anything is read
        self.policy.check(location, f"metadata location of table {ns}.{name}")
        metadata = self.read_metadata(location, f"table {ns}.{name}")
        if snapshots == "refs":
            referenced = {ref.snapshot_id for ref in metadata.refs.values()}
            metadata = metadata.model_copy(
                update={"snapshots": [s for s in metadata.snapshots if s.snapshot_id in referenced]}
            )
        loaded = self.loaded(ns, name, location, metadata, snapshots)
        self.tables.put(key, loaded)
        return loaded

    def loaded(
        self, ns: str, name: str, location: str, metadata: TableMetadata, mode: str = "all"
    ) -> LoadedTable:
        body = b"".join(
            (
                b'{"metadata-location":',
                json.dumps(location).encode(),
                b',"metadata":',
                metadata.model_dump_json().encode(),
                b',"config":',
                self._config_json,
                b"}",
            )
        )
        etag = '"' + hashlib.sha256(f"{mode}\0{location}".encode()).hexdigest()[:32] + '"'
        return LoadedTable(ns, name, location, metadata, body, etag)

    @staticmethod
    def metadata_location(snap: CatalogSnapshot, ns: str, name: str) -> str:
        try:
            tdef = snap.describe_table(ns, name)
        except (NotFoundError, InvalidNameError):
            raise not_found("NoSuchTableException", f"Table does not exist: {ns}.{name}") from None
        try:  # what an Iceberg table is: the Iceberg front end's one rule
            return metadata_location_of(f"{ns}.{name}", tdef)
        except NoSuchIcebergTableError as exc:
            raise not_found("NoSuchTableException", f"Table does not exist: {exc}") from None

    def read_metadata(self, location: str, what: str) -> TableMetadata:
        """Iceberg table metadata at `location`, read with the catalog's own FileIO settings
        (never with properties of the table, which could name classes to import)."""
        io = load_file_io(properties=self.catalog.properties, location=location)
        try:
            return FromInputFile.table_metadata(io.new_input(location))
        except FileNotFoundError:
            raise RestError(
                500, "InternalServerError", f"the metadata file of {what} is missing: {location}"
            ) from None
        except IcebergValidationError as exc:  # not a ValueError: the stored file is bad
            raise RestError(
                500,
                "InternalServerError",
                f"the metadata file of {what} is not valid Iceberg table metadata "
                f"({location}): {validation_detail(exc)}",
            ) from None
        except (ValueError, OSError) as exc:
            raise RestError(
                500,
                "InternalServerError",
                f"the metadata file of {what} cannot be read ({location}): {exc}",
            ) from None

    def table_exists(self, pin: Pin, ns: str, name: str) -> bool:
        """HEAD's answer: True exactly when GET finds an Iceberg table (a TrinityLake
        table of another format is 404 to both, as PyIceberg's table_exists)."""
        try:
            self.metadata_location(self.snapshot(pin), ns, name)
        except RestError as exc:
            if exc.status == 404 and exc.type == "NoSuchTableException":
                return False
            raise
        return True

    def list_objects(
        self, pin: Pin, kind: str, ns: str, token: str | None, size: str | None
    ) -> dict[str, Any]:
        paginate, after, limit = rq.page(token, size)
        snap = self.snapshot(pin)
        if not self._namespace_exists(snap, ns):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
        try:  # Iceberg tables or views only (trinityfs/iceberg/objects.py)
            threads = read_threads(self.lake.url)
            if paginate:
                names = iceberg_page(snap, kind, ns, after, limit + 1, threads)
            else:
                names = list(iceberg_names(snap, kind, ns, threads=threads))
        except NotFoundError:
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
        except InvalidNameError:  # the namespace is there: the token's name is no name
            raise rq.bad_token(token) from None
        out: dict[str, Any] = {}
        if paginate:
            more = len(names) > limit
            names = names[:limit]
            out["next-page-token"] = rq.next_token(names[-1]) if more else None
        out["identifiers"] = [{"namespace": [ns], "name": n} for n in names]
        return out

    # -- namespaces -----------------------------------------------------------------

    def list_namespaces(
        self, pin: Pin, parent: str | None, token: str | None, size: str | None
    ) -> dict[str, Any]:
        paginate, after, limit = rq.page(token, size)
        snap = self.snapshot(pin)
        if parent:
            ns = rq.namespace_param(parent)
            if not self._namespace_exists(snap, ns):
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
            return {"namespaces": [], **({"next-page-token": None} if paginate else {})}
        if paginate:
            try:
                names = snap.list_namespaces(after, limit + 1)
            except InvalidNameError:
                raise rq.bad_token(token) from None
            more = len(names) > limit
            names = names[:limit]
            token_out = rq.next_token(names[-1]) if more else None
            return {"namespaces": [[n] for n in names], "next-page-token": token_out}
        names, after = [], None
        while True:
            batch = snap.list_namespaces(after, rq.DEFAULT_PAGE_SIZE)
            names.extend(batch)
            if len(batch) < rq.DEFAULT_PAGE_SIZE:
                return {"namespaces": [[n] for n in names]}
            after = batch[-1]

    @staticmethod
    def _namespace_exists(snap: CatalogSnapshot, ns: str) -> bool:
        try:
            return snap.namespace_exists(ns)
        except InvalidNameError:
            return False

    def namespace_exists(self, pin: Pin, ns: str) -> bool:
        return self._namespace_exists(self.snapshot(pin), ns)

    def load_namespace(self, pin: Pin, ns: str) -> dict[str, Any]:
        snap = self.snapshot(pin)
        try:
            props = dict(snap.describe_namespace(ns).properties)
        except (NotFoundError, InvalidNameError):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
        return {"namespace": [ns], "properties": props}

    def create_namespace(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = rq.namespace_json(body.get("namespace"))
        props = rq.string_map(body.get("properties"), "properties")
        if "location" in props:
            self.policy.check(props["location"], "namespace location")
        self.catalog.create_namespace((ns,), props)  # a tuple: a dot is no level
        return {"namespace": [ns], "properties": props}

    def drop_namespace(self, ns: str) -> None:
        self.catalog.drop_namespace((ns,))

    def update_namespace(self, ns: str, body: dict[str, Any]) -> dict[str, Any]:
        removals = rq.string_list(body.get("removals"), "removals")
        updates = rq.string_map(body.get("updates"), "updates")
        both = sorted(set(removals) & set(updates))
        if both:
            raise RestError(
                422,
                "UnprocessableEntityException",
                f"properties {both} are both updated and removed",
            )
        if "location" in updates:
            self.policy.check(updates["location"], "namespace location")
        summary = self.catalog.update_namespace_properties((ns,), set(removals), updates)
        return {
            "updated": list(summary.updated),
            "removed": list(summary.removed),
            "missing": list(summary.missing or []),
        }


__all__ = ["PATH_PROPERTIES", "LoadedTable", "RestCatalogService", "is_class_property"]
