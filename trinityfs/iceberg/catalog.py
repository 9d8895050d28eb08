"""`TrinityCatalog`: a PyIceberg catalog whose state is a TrinityLake lakehouse.

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
from pyiceberg.exceptions import (
    CommitFailedException,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.io import WAREHOUSE
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import AssertCreate
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from trinityfs.catalog import CatalogTransaction, Lakehouse, Selection, read_config
from trinityfs.catalog.definitions import TableDef
from trinityfs.errors import LakehouseNotFoundError, ReadOnlyError
from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.files import TableFilesMixin
from trinityfs.iceberg.io import STORAGE_OPTIONS, location_policy, resolve_io_properties
from trinityfs.iceberg.multitable import MultiTableTransaction, delete_quietly, files_added_by
from trinityfs.iceberg.namespaces import NamespaceMixin
from trinityfs.iceberg.objects import iceberg_table
from trinityfs.iceberg.pointer import (
    EXTERNAL,
    ICEBERG,
    METADATA_LOCATION,
    PREVIOUS_METADATA_LOCATION,
    is_iceberg,
    metadata_location_of,
    table_def,
)
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

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableRequirement, TableUpdate

    from trinityfs.catalog import CatalogSnapshot
    from trinityfs.iceberg.reclaim import ReclaimReport

log = logging.getLogger(__name__)

T = TypeVar("T")


class UnsupportedIdentifierError(ValueError):
    """An identifier with more levels than TrinityLake's namespace.table."""


class TrinityCatalog(TableFilesMixin, NamespaceMixin, MetastoreCatalog):
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

    def multi_table_transaction(self) -> MultiTableTransaction:
        """Stage changes to several tables and commit them as ONE catalog version.

        with catalog.multi_table_transaction() as mt:
            orders = mt.load_table("sales.orders")
            totals = mt.load_table("sales.totals")
            orders.append(new_orders)          # staged, not yet visible
            totals.overwrite(new_totals)       # staged
        # leaving the block commits both in one catalog version (mt.committed_version)
        """
        self._check_writable()
        return MultiTableTransaction(self)

    # -- identifiers ----------------------------------------------------------------

    def _get_default_warehouse_location(self, database_name: str, table_name: str) -> str:
        """PyIceberg's default (the namespace's `location`, else <warehouse>/<ns>/<table>),
        asking for the namespace as a tuple: PyIceberg passes a string, which it would
        split at a dot that belongs to the namespace's name."""
        location = self.load_namespace_properties((database_name,)).get("location")
        if location:
            return f"{location.rstrip('/')}/{table_name}"
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
                txn.abort()
                raise
            return result

    def _table_from_def(self, ns: str, name: str, tdef: TableDef) -> Table:
        location = metadata_location_of(f"{ns}.{name}", tdef)
        metadata = self._read_metadata(f"{ns}.{name}", location)
        return Table(
            identifier=(ns, name),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )

    # -- tables ---------------------------------------------------------------------

    def load_table(self, identifier: str | Identifier) -> Table:
        ns, name = self._table_ref(identifier)
        return self._table_from_def(ns, name, iceberg_table(self._view(), ns, name))

    def table_exists(self, identifier: str | Identifier) -> bool:
        """True when `load_table` would find an Iceberg table (PyIceberg's meaning, as the
        REST HEAD): a TrinityLake table of another format holds the name but is no
        Iceberg table (see `name_taken`; trinityfs/iceberg/objects.py)."""
        ns, name = self._table_ref(identifier)
        try:
            iceberg_table(self._view(), ns, name)
        except NoSuchTableError:  # NoSuchIcebergTableError included
            return False
        return True

    def name_taken(self, identifier: str | Identifier) -> bool:
        """True when a table of any format holds the name (a create would fail)."""
        ns, name = self._table_ref(identifier)
        try:
            with iceberg_errors(f"table {ns}.{name}", table=f"{ns}.{name}", must_exist=True):
                return self._view().object_location("table", ns, name) is not None
        except NoSuchTableError:
            return False

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> Table:
        self._check_writable()
        from pyiceberg.table import TableProperties

        schema = self._convert_schema_if_needed(
            schema,
            int(
                properties.get(
                    TableProperties.FORMAT_VERSION, TableProperties.DEFAULT_FORMAT_VERSION
                )
            ),
        )
        ns, name = self._table_ref(identifier)
        if not self.namespace_exists((ns,)):  # a tuple: a dot in the name is no level
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
        if self.name_taken((ns, name)):
            raise TableAlreadyExistsError(f"Table {ns}.{name} already exists")
        location = self.check_location(
            self._resolve_table_location(location, ns, name), f"table {ns}.{name}: location"
        )
        provider = load_location_provider(table_location=location, table_properties=properties)
        metadata_location = provider.new_table_metadata_file_location()
        metadata = new_table_metadata(
            location=location,
            schema=schema,
            partition_spec=partition_spec,
            sort_order=sort_order,
            properties=properties,
        )
        self._check_table_locations(f"{ns}.{name}", metadata)
        io = self._load_file_io(location=metadata_location)
        self._write_metadata(metadata, io, metadata_location)
        tdef = table_def(metadata, metadata_location, None)

        def change(txn: CatalogTransaction) -> None:
            txn.put("table", ns, name, tdef, mode="create")

        try:
            self._write(change, f"creating table {ns}.{name}", table=f"{ns}.{name}", namespace=ns)
        except (CommitFailedException, TableAlreadyExistsError, NoSuchNamespaceError):
            delete_quietly(io, metadata_location)
            if self._staging is None and self.name_taken((ns, name)):
                raise TableAlreadyExistsError(f"Table {ns}.{name} already exists") from None
            raise
        self._remember((ns, name), None, metadata_location, metadata)
        return Table(
            identifier=(ns, name),
            metadata=metadata,
            metadata_location=metadata_location,
            io=self._load_file_io(metadata.properties, metadata_location),
            catalog=self,
        )

    def register_table(
        self, identifier: str | Identifier, metadata_location: str, overwrite: bool = False
    ) -> Table:
        """Point a (new, or with overwrite an existing) table at an Iceberg metadata file."""
        self._check_writable()
        ns, name = self._table_ref(identifier)
        metadata = self._read_metadata(f"{ns}.{name}", metadata_location)

        def change(txn: CatalogTransaction) -> None:
            old = None
            if overwrite:
                old = self._current_def(txn, ns, name)
                taken = old is None and txn.object_kind(ns, name) is not None  # a view
                if taken or (old is not None and not is_iceberg(old)):
                    # overwrite replaces an Iceberg table's pointer; a view, or a table
                    # of another format, holding the name is refused as create refuses it
                    what = "a view" if old is None else f"table_format {old.table_format!r}"
                    raise TableAlreadyExistsError(
                        f"Table {ns}.{name} already exists and is not an Iceberg table "
                        f"({what}): overwrite replaces Iceberg tables only"
                    )
            tdef = table_def(metadata, metadata_location, old, EXTERNAL)
            txn.put("table", ns, name, tdef, mode="upsert" if overwrite else "create")

        self._write(change, f"registering table {ns}.{name}", table=f"{ns}.{name}", namespace=ns)
        return self.load_table((ns, name))

    @staticmethod
    def _current_def(txn: CatalogTransaction, ns: str, name: str) -> TableDef | None:
        """The table's definition in `txn` (None: no table of that name; a view of that
        name is replaced by `put`). NamespaceNotFoundError passes to the caller."""
        if txn.object_kind(ns, name) != "table":
            txn.describe_namespace(ns)  # NamespaceNotFoundError when it is missing
            return None
        return txn.describe_table(ns, name)

    def drop_table(self, identifier: str | Identifier) -> None:
        ns, name = self._table_ref(identifier)
        ident = f"{ns}.{name}"

        def change(txn: CatalogTransaction) -> None:
            iceberg_table(txn, ns, name)  # a table of another format is no Iceberg table
            txn.drop_table(ns, name)

        self._write(change, f"dropping table {ident}", table=ident, namespace=ns, must_exist=True)

    def purge_table(self, identifier: str | Identifier) -> None:
        """Drop the table from the catalog; its files are NOT deleted here.

        Older catalog versions (time travel, exports, rollback) still reference the
        table's files, so deleting them now would break those versions. The files are
        reclaimed later by `reclaim_files()` (opt-in, dry run first), which deletes only
        table files that no kept catalog version references.
        """
        self.drop_table(identifier)

    def reclaim_files(
        self, *, dry_run: bool = True, older_than_seconds: float | None = None
    ) -> ReclaimReport:
        """Table files under the allowed locations that no kept catalog version references
        (dropped or purged tables, rolled-back or expired commits). With dry_run (the
        default) only lists them; with dry_run=False deletes them. Files younger than
        `older_than_seconds` (default 3 days, like Iceberg's orphan-file removal) are
        kept: a running job may be about to commit them."""
        from trinityfs.iceberg.reclaim import reclaim_files

        self._check_writable()
        return reclaim_files(self, dry_run=dry_run, older_than_seconds=older_than_seconds)

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        ns, name = self._table_ref(from_identifier)
        new_ns, new_name = self._table_ref(to_identifier)

        def change(txn: CatalogTransaction) -> None:
            if not txn.namespace_exists(new_ns):
                raise NoSuchNamespaceError(f"Namespace does not exist: {new_ns}")
            what = f"renaming table {ns}.{name}"
            # missing, unusable or of another format: no such (Iceberg) table, refused
            # before anything changes, as PyIceberg's Glue catalog does
            iceberg_table(txn, ns, name)
            # the source exists: a name the catalog refuses now is the destination's,
            # the caller's error (InvalidNameError, REST 400), not "no such table"
            with iceberg_errors(what, table=f"{ns}.{name}", target=f"{new_ns}.{new_name}"):
                txn.rename_table(ns, name, new_ns, new_name)

        self._write(change, f"renaming table {ns}.{name}", table=f"{ns}.{name}", namespace=ns)
        return self.load_table((new_ns, new_name))

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        """Apply updates to the table's current metadata and swap its pointer, atomically.

        The pointer is read and replaced (`put` against the base version) in one catalog
        transaction: if any other commit changes this table after the transaction's base
        version, the catalog commit conflicts and this raises CommitFailedException
        (PyIceberg then refreshes and retries). Requirements are checked against the
        metadata the pointer names.
        """
        self._check_writable()
        ns, name = self._table_ref(table.name())
        written: list[str] = []
        outcome: dict[str, Any] = {}

        def change(txn: CatalogTransaction) -> CommitTableResponse:
            written.clear()
            old = self._current_def(txn, ns, name)
            creating = any(isinstance(r, AssertCreate) for r in requirements)
            if creating and old is not None and not is_iceberg(old):
                # a table of another format holds the name: create_table's answer
                raise TableAlreadyExistsError(f"Table {ns}.{name} already exists")
            if old is None and not creating:
                # dropped (or renamed away) since the client loaded it: not a conflict
                # to retry, and never a table made from the updates alone
                raise NoSuchTableError(f"Table does not exist: {ns}.{name}")
            current = None if old is None else self._table_from_def(ns, name, old)
            staged = self._update_and_stage_table(current, (ns, name), requirements, updates)
            self._check_table_locations(f"{ns}.{name}", staged.metadata)
            if current is not None and staged.metadata == current.metadata:
                return CommitTableResponse(
                    metadata=current.metadata, metadata_location=current.metadata_location
                )
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            written.append(staged.metadata_location)
            outcome.update(io=staged.io, base=None if current is None else current.metadata)
            tdef = table_def(staged.metadata, staged.metadata_location, old)
            txn.put("table", ns, name, tdef, mode="create" if old is None else "replace")
            return CommitTableResponse(
                metadata=staged.metadata, metadata_location=staged.metadata_location
            )

        try:
            response = self._write(
                change, f"commit to table {ns}.{name}", table=f"{ns}.{name}", namespace=ns
            )
        except BaseException as exc:
            # only files of a commit known not to have landed are removed
            if written and isinstance(exc, CommitFailedException | TableAlreadyExistsError):
                delete_quietly(outcome["io"], written[0])
            if (
                isinstance(exc, CommitFailedException)
                and outcome.get("base") is None
                and written
                and self.name_taken((ns, name))
            ):
                raise TableAlreadyExistsError(
                    f"Table {ns}.{name} already exists (created by a concurrent commit)"
                ) from exc
            raise
        if written:
            self._remember((ns, name), outcome.get("base"), written[0], response.metadata)
        return response

    def _remember(
        self, ident: Identifier, base: TableMetadata | None, location: str, metadata: TableMetadata
    ) -> None:
        """Record what a staged (multi-table) commit wrote, to clean it up on failure."""
        if self._staging is not None:
            self._written.append((ident, base, location, metadata))

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
