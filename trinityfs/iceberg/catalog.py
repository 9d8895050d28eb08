"""`TrinityCatalog`: a PyIceberg catalog whose state is a TrinityLake lakehouse.

The roles live in mixins: tables (trinityfs/iceberg/tables.py), namespaces and views
(namespaces.py), table files and locations (files.py); this module holds configuration,
version pins, identifiers and the one write path (`_write`).

Mapping:
- an Iceberg namespace is a TrinityLake namespace (one level: TrinityLake has exactly
  two levels, namespace and table; deeper identifiers are rejected with
  `UnsupportedIdentifierError`), its properties are the `NamespaceDef` properties;
- an Iceberg table is a `TableDef` pointing at its Iceberg metadata
  (trinityfs/iceberg/pointer.py);
- every change is one catalog transaction (one new catalog version); `commit_table`
  reads the table's pointer and replaces it in the same transaction, so the swap lands
  only if no other commit changed that table since (compare-and-swap on the pointer it
  started from). A lost race is raised as PyIceberg's `CommitFailedException`, which
  PyIceberg's own commit retry (`commit.retry.*` table properties) handles;
- `multi_table_transaction()` stages commits to several tables (and creates, drops,
  namespace changes) and commits them as ONE catalog version;
- with the property `version` (a version selector: a number, an export name, an ISO
  time, resolved by the catalog's one precedence, `Lakehouse.resolve`) or `timestamp`
  (ISO 8601 or epoch milliseconds) the catalog is pinned to that version: read-only,
  every table is loaded as it was then.

Root, storage options and the version pin are read by the catalog's one configuration
reader (`trinityfs.catalog.read_config`): properties, then the environment
(TRINITYFS_ROOT, TRINITYFS_STORAGE_OPTIONS, TRINITYFS_VERSION), then fsspec's config.
Catalog errors become PyIceberg's exceptions in one place, trinityfs/iceberg/errors.py.

Table data and metadata live by default in `<root>/warehouse/<namespace>/<table>/`
(property `warehouse` to change it; a namespace property `location` overrides it per
namespace). Expiration and garbage collection never touch them: they only delete files
whose names match the format's own node, definition and transaction patterns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pyiceberg.catalog import Catalog, MetastoreCatalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.io import WAREHOUSE
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import Identifier

from trinityfs.catalog import CatalogTransaction, Lakehouse, Selection, read_config
from trinityfs.errors import LakehouseNotFoundError, ReadOnlyError
from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.files import TableFilesMixin, default_location_segment
from trinityfs.iceberg.io import STORAGE_OPTIONS, location_policy, resolve_io_properties
from trinityfs.iceberg.multitable import MultiTableTransaction, files_added_by
from trinityfs.iceberg.namespaces import NamespaceMixin
from trinityfs.iceberg.pointer import ICEBERG, METADATA_LOCATION, PREVIOUS_METADATA_LOCATION
from trinityfs.iceberg.properties import (
    CREATE,
    DEFAULT_WAREHOUSE_DIR,
    ROOT,
    TIMESTAMP,
    VERSION,
    parse_timestamp,
    time_selector,
    truthy,
)
from trinityfs.iceberg.tables import TablesMixin

if TYPE_CHECKING:
    from trinityfs.catalog import CatalogSnapshot

log = logging.getLogger(__name__)

T = TypeVar("T")


class UnsupportedIdentifierError(ValueError):
    """An identifier with more levels than TrinityLake's namespace.table."""


class TrinityCatalog(TablesMixin, TableFilesMixin, NamespaceMixin, MetastoreCatalog):
    """A PyIceberg catalog over a TrinityLake lakehouse.

    Properties (all strings, as `load_catalog` passes them):
      root             the lakehouse URL (local path, file://, s3://, memory://); else
                       $TRINITYFS_ROOT or fsspec's config (`trinityfs.catalog.read_config`)
      warehouse        where new tables go (default `<root>/warehouse`)
      version          pin the catalog to this version selector (read-only): a version
                       number, an export name, an ISO time (`Lakehouse.resolve`)
      timestamp        pin it to the version current at this time (read-only)
      allowed-locations  comma-separated URL prefixes where table files may live besides
                       the warehouse (every other location is refused before any access)
      create           "true": create the lakehouse at `root` when there is none
      storage-options  JSON object of fsspec options for `root` (else derived from s3.*),
                       merged over $TRINITYFS_STORAGE_OPTIONS key by key
      s3.*             PyIceberg's S3 FileIO settings (else derived from storage-options)
      verify           what a commit verifies: "reads" or "tree" (else $TRINITYFS_VERIFY;
                       `trinityfs.txn.verify`)
    """

    def __init__(self, name: str, **properties: Any):
        super().__init__(name, **properties)
        self._staging: CatalogTransaction | None = None
        self._written: list[tuple[Identifier, TableMetadata | None, str, TableMetadata]] = []
        self.last_committed_version: int | None = None
        version, timestamp = self.properties.get(VERSION), self.properties.get(TIMESTAMP)
        if version not in (None, "") and timestamp not in (None, ""):
            raise ValueError("give the catalog a 'version' or a 'timestamp', not both")
        found = read_config(root=self.properties.get(ROOT) or None)
        if found.sources.get("root") == "default":
            raise ValueError(
                "TrinityCatalog needs the property 'root' (the lakehouse URL, e.g. "
                "'./demo-lake', 's3://bucket/lake'), or $TRINITYFS_ROOT"
            )
        root = found.root
        warehouse = str(self.properties.get(WAREHOUSE) or root)
        given, _ = resolve_io_properties(root, warehouse, self.properties)
        config = read_config(
            root=root,
            storage_options=given,
            version=time_selector(timestamp) if timestamp not in (None, "") else version,
            verify=self.properties.get("verify") or None,
        )
        opts = config.storage_options or None
        with_opts = {**self.properties, STORAGE_OPTIONS: opts} if opts else self.properties
        self.storage_options = opts
        self._lake = self._open(config.root, opts, truthy(self.properties.get(CREATE, "false")))
        self._lake.freshness = config.freshness
        self._lake.verify = config.verify
        if not self.properties.get(WAREHOUSE):
            self.properties[WAREHOUSE] = self._lake.url + DEFAULT_WAREHOUSE_DIR
        _, extra = resolve_io_properties(root, self.properties[WAREHOUSE], with_opts)
        for key, value in extra.items():
            self.properties.setdefault(key, value)
        self._policy = location_policy(self.properties)
        self._pin: Selection | None = None
        if config.version is not None:
            selection = self._lake.resolve(config.version)  # fails early when unreadable
            self._pin = None if selection.is_latest else selection

    @staticmethod
    def _open(root: str, opts: dict[str, Any] | None, create: bool) -> Lakehouse:
        if create:
            return Lakehouse.create(root, storage_options=opts, exist_ok=True)
        try:
            return Lakehouse.open(root, storage_options=opts)
        except LakehouseNotFoundError as exc:
            raise LakehouseNotFoundError(
                f"{exc} (create it with Lakehouse.create(), or give the catalog create='true')"
            ) from None

    # -- the lakehouse and its versions ---------------------------------------------

    @property
    def lakehouse(self) -> Lakehouse:
        return self._lake

    @property
    def pinned_version(self) -> int | None:
        """The catalog version this catalog is pinned to (None: it follows the latest)."""
        return None if self._pin is None else self._pin.version

    @property
    def pin(self) -> Selection | None:
        """What the `version`/`timestamp` property resolved to (None: the latest)."""
        return self._pin

    @property
    def read_only(self) -> bool:
        return self._pin is not None

    def current_version(self) -> int:
        """The catalog version reads see now (the pinned one, or the latest)."""
        return self._pin.version if self._pin is not None else self._lake.latest_version()

    def at(
        self, version: int | str | None = None, *, timestamp: datetime | int | str | None = None
    ) -> TrinityCatalog:
        """A read-only copy of this catalog pinned to `version` (any version selector) or
        to `timestamp`."""
        props = {k: v for k, v in self.properties.items() if k not in (VERSION, TIMESTAMP)}
        if timestamp is not None:
            when = timestamp.isoformat() if isinstance(timestamp, datetime) else timestamp
            props[TIMESTAMP] = str(when)
        else:
            props[VERSION] = str(self._lake.latest_version() if version is None else version)
        props.pop(CREATE, None)
        return type(self)(self.name, **props)

    def table_version(self, identifier: str | Identifier) -> int:
        """The catalog version that last created or replaced this table (at or before the
        version this catalog reads); e.g. the version a Spark write just committed.
        O(log versions): the catalog's `Lakehouse.last_changed`."""
        ns, name = self._table_ref(identifier)
        with iceberg_errors(f"table {ns}.{name}", table=f"{ns}.{name}", must_exist=True):
            return self._lake.last_changed(ns, name, at=self.current_version()).version

    def staged_in(self, txn: CatalogTransaction) -> TrinityCatalog:
        """A copy of this catalog whose reads see `txn` and whose changes are staged in it
        (committed when `txn` commits; e.g. a distributed transaction Spark jobs join)."""
        self._check_writable()
        staged = type(self).__new__(type(self))
        staged.__dict__.update(self.__dict__)
        staged.properties = dict(self.properties)
        staged._written = []
        staged._staging = txn
        return staged

    def multi_table_transaction(self, *, remove_added_files: bool = True) -> MultiTableTransaction:
        """Stage changes to several tables and commit them as ONE catalog version.

        with catalog.multi_table_transaction() as mt:
            orders = mt.load_table("sales.orders")
            totals = mt.load_table("sales.totals")
            orders.append(new_orders)          # staged, not yet visible
            totals.overwrite(new_totals)       # staged
        # leaving the block commits both in one catalog version (mt.committed_version)

        A failed or aborted block removes the files its commits added (data files,
        manifests: written by this process); `remove_added_files=False` removes only the
        metadata files the catalog wrote (the REST server: a client's files are its own).
        """
        self._check_writable()
        return MultiTableTransaction(self, remove_added_files=remove_added_files)

    # -- identifiers ----------------------------------------------------------------

    def _get_default_warehouse_location(self, database_name: str, table_name: str) -> str:
        """PyIceberg's default (the namespace's `location`, else <warehouse>/<ns>/<table>),
        asking for the namespace as a tuple: PyIceberg passes a string, which it would
        split at a dot that belongs to the namespace's name."""
        default_location_segment(table_name, "table")
        location = self.load_namespace_properties((database_name,)).get("location")
        if location:
            return f"{location.rstrip('/')}/{table_name}"
        default_location_segment(database_name, "namespace")
        warehouse = self.properties.get("warehouse")
        if not warehouse:
            raise ValueError("no default location: give a location or the warehouse property")
        return f"{warehouse.rstrip('/')}/{database_name}/{table_name}"

    def _namespace_name(self, namespace: str | Identifier) -> str:
        tup = Catalog.identifier_to_tuple(namespace)
        Catalog.namespace_to_string(tup, NoSuchNamespaceError)  # empty parts
        if len(tup) != 1:
            raise UnsupportedIdentifierError(
                f"namespace {'.'.join(tup)!r} has {len(tup)} levels; a TrinityLake "
                "lakehouse has one level of namespaces (identifiers are namespace.table)"
            )
        return tup[0]

    def _table_ref(self, identifier: str | Identifier) -> tuple[str, str]:
        tup = Catalog.identifier_to_tuple(identifier)
        if len(tup) < 2:
            raise NoSuchNamespaceError(
                f"table identifier {'.'.join(tup)!r} has no namespace (use namespace.table)"
            )
        if len(tup) > 2:
            raise UnsupportedIdentifierError(
                f"table identifier {'.'.join(tup)!r} has {len(tup)} levels; a TrinityLake "
                "lakehouse has exactly two: namespace.table"
            )
        ns, name = tup
        if not ns.strip():
            raise NoSuchNamespaceError(f"table identifier {'.'.join(tup)!r} has an empty namespace")
        return ns, name

    # -- reading and writing the lakehouse ------------------------------------------

    def _view(self) -> CatalogSnapshot | CatalogTransaction:
        """What reads see: the staged transaction, the pinned version, or the latest."""
        if self._staging is not None:
            return self._staging
        if self._pin is not None:
            return self._lake.view(self._pin)
        return self._lake.at()

    def _check_writable(self) -> None:
        if self._pin is not None:
            raise ReadOnlyError(
                f"catalog {self.name!r} is pinned to catalog version {self._pin.version} "
                f"({self._pin.selector!r}) and is read-only: open it without "
                "'version'/'timestamp' to change tables"
            )

    def _write(
        self,
        change: Callable[[CatalogTransaction], T],
        what: str,
        *,
        table: str | None = None,
        namespace: str | None = None,
        target: str | None = None,
        must_exist: bool = False,
    ) -> T:
        """Run `change` in one catalog transaction (or stage it in a multi-table one);
        catalog errors become PyIceberg's (`iceberg_errors`) naming the subject."""
        self._check_writable()
        subject = {"table": table, "namespace": namespace, "target": target}
        with iceberg_errors(what, **subject, must_exist=must_exist):
            if self._staging is not None:
                return change(self._staging)
            txn = self._lake.transaction()
            try:
                result = change(txn)
                self.last_committed_version = txn.commit()
            except BaseException:
                txn.discard()  # a commit that landed stands; its exception propagates
                raise
            return result

    def close(self) -> None:
        if self._staging is not None:
            self._staging.abort()
            self._staging = None


__all__ = [
    "ICEBERG",
    "METADATA_LOCATION",
    "PREVIOUS_METADATA_LOCATION",
    "MultiTableTransaction",
    "TrinityCatalog",
    "UnsupportedIdentifierError",
    "files_added_by",
    "parse_timestamp",
    "time_selector",
]
