"""`TrinityCatalog`: a PyIceberg catalog whose state is a TrinityLake lakehouse.

Mapping:
- an Iceberg namespace is a TrinityLake namespace (one level: TrinityLake has exactly
  two levels, namespace and table; deeper identifiers are rejected with
  `UnsupportedIdentifierError`), its properties are the `NamespaceDef` properties;
- an Iceberg table is a `TableDef` with table_format ICEBERG, format_properties
  `metadata_location` / `previous_metadata_location`, and a schema mirroring the current
  Iceberg schema (trinityfs/iceberg/schema.py); primary_keys are the identifier field
  ids, distribution_keys the source columns of the default partition spec, sort_keys the
  source columns of the default sort order;
- every change is one catalog transaction (one new catalog version); `commit_table`
  reads the table's pointer and replaces it in the same transaction, so the swap lands
  only if no other commit changed that table since (compare-and-swap on the pointer it
  started from). A lost race is raised as PyIceberg's `CommitFailedException`, which
  PyIceberg's own commit retry (`commit.retry.*` table properties) handles;
- `multi_table_transaction()` stages commits to several tables (and creates, drops,
  namespace changes) and commits them as ONE catalog version;
- with the property `version` (a catalog version number) or `timestamp` (ISO 8601 or
  epoch milliseconds) the catalog is pinned to that version: read-only, every table is
  loaded as it was then.

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

from pyiceberg.catalog import Catalog, MetastoreCatalog, PropertiesUpdateSummary
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchIcebergTableError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
)
from pyiceberg.io import WAREHOUSE, FileIO
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from trinityfs.catalog import CatalogTransaction, Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    InvalidArgumentError,
    InvalidNameError,
    LakehouseNotFoundError,
    LocationNotAllowedError,
    NamespaceNotFoundError,
    ObjectNotFoundError,
    ReadOnlyError,
    StorageFileNotFoundError,
)
from trinityfs.errors import NamespaceNotEmptyError as TrinityNamespaceNotEmptyError
from trinityfs.format.trinitylake_pb2 import TableDef
from trinityfs.iceberg.io import confined_file_io, location_policy, resolve_io_properties
from trinityfs.iceberg.schema import to_tabledef_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableRequirement, TableUpdate
    from pyiceberg.view import View

    from trinityfs.iceberg.reclaim import ReclaimReport

log = logging.getLogger(__name__)

ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
MANAGED = "MANAGED"
LOCATION = "location"  # the namespace property PyIceberg puts new tables under
EXTERNAL = "EXTERNAL"

ROOT = "root"
VERSION = "version"
TIMESTAMP = "timestamp"
CREATE = "create"
DEFAULT_WAREHOUSE_DIR = "warehouse"

T = TypeVar("T")


class UnsupportedIdentifierError(ValueError):
    """An identifier with more levels than TrinityLake's namespace.table."""


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def parse_timestamp(value: Any) -> datetime | int:
    """A `timestamp` option: epoch milliseconds, or ISO 8601 (UTC when no zone given)."""
    if isinstance(value, datetime | int):
        return value
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return int(text)
    from datetime import UTC

    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"timestamp {value!r} is neither epoch milliseconds nor ISO 8601"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class TrinityCatalog(MetastoreCatalog):
    """A PyIceberg catalog over a TrinityLake lakehouse.

    Properties (all strings, as `load_catalog` passes them):
      root             the lakehouse URL (local path, file://, s3://, memory://); required
      warehouse        where new tables go (default `<root>/warehouse`)
      version          pin the catalog to this catalog version (read-only)
      timestamp        pin it to the version current at this time (read-only)
      allowed-locations  comma-separated URL prefixes where table files may live besides
                       the warehouse (every other location is refused before any access)
      create           "true": create the lakehouse at `root` when there is none
      storage-options  JSON object of fsspec options for `root` (else derived from s3.*)
      s3.*             PyIceberg's S3 FileIO settings (else derived from storage-options)
    """

    def __init__(self, name: str, **properties: Any):
        super().__init__(name, **properties)
        root = self.properties.get(ROOT)
        if not root:
            raise ValueError(
                "TrinityCatalog needs the property 'root' (the lakehouse URL, e.g. "
                "'./demo-lake', 's3://bucket/lake')"
            )
        self._staging: CatalogTransaction | None = None
        self._written: list[tuple[Identifier, TableMetadata | None, str, TableMetadata]] = []
        self.last_committed_version: int | None = None
        opts, extra = resolve_io_properties(
            str(root), str(self.properties.get(WAREHOUSE) or root), self.properties
        )
        self.storage_options = opts
        self._lake = self._open(str(root), opts, _truthy(self.properties.get(CREATE, "false")))
        if not self.properties.get(WAREHOUSE):
            self.properties[WAREHOUSE] = self._lake.url + DEFAULT_WAREHOUSE_DIR
            _, extra = resolve_io_properties(str(root), self.properties[WAREHOUSE], self.properties)
        for key, value in extra.items():
            self.properties.setdefault(key, value)
        self._policy = location_policy(self.properties)
        self._pinned: int | None = None
        version, timestamp = self.properties.get(VERSION), self.properties.get(TIMESTAMP)
        if version not in (None, "") and timestamp not in (None, ""):
            raise ValueError("give the catalog a 'version' or a 'timestamp', not both")
        if version not in (None, ""):
            self._pinned = int(version)
            self._lake.at(self._pinned)  # fails early when the version is not readable
        elif timestamp not in (None, ""):
            self._pinned = self._lake.version_at(parse_timestamp(timestamp))

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
        return self._pinned

    @property
    def read_only(self) -> bool:
        return self._pinned is not None

    def current_version(self) -> int:
        """The catalog version reads see now (the pinned one, or the latest)."""
        return self._pinned if self._pinned is not None else self._lake.latest_version()

    def at(
        self, version: int | None = None, *, timestamp: datetime | int | str | None = None
    ) -> TrinityCatalog:
        """A read-only copy of this catalog pinned to `version` (or to `timestamp`)."""
        props = {k: v for k, v in self.properties.items() if k not in (VERSION, TIMESTAMP)}
        if timestamp is not None:
            version = self._lake.version_at(parse_timestamp(timestamp))
        if version is None:
            version = self._lake.latest_version()
        props[VERSION] = str(version)
        props.pop("create", None)
        return type(self)(self.name, **props)

    def table_version(self, identifier: str | Identifier) -> int:
        """The catalog version that last created or replaced this table (at or before the
        version this catalog reads); e.g. the version a Spark write just committed."""
        from trinityfs.catalog import ObjectRef

        ns, name = self._table_ref(identifier)
        version = self.current_version()
        self._describe(self._lake.at(version), ns, name)  # NoSuchTableError when missing
        target = ObjectRef(ns, name, "table")
        oldest = self._lake.oldest_version()
        while version > oldest:
            if any(c.object == target for c in self._lake.changes(version)):
                return version
            version -= 1
        return oldest

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

    def _view(self) -> Any:
        """What reads see: the staged transaction, the pinned version, or the latest."""
        if self._staging is not None:
            return self._staging
        return self._lake.at(self._pinned)

    def _check_writable(self) -> None:
        if self._pinned is not None:
            raise ReadOnlyError(
                f"catalog {self.name!r} is pinned to catalog version {self._pinned} and is "
                "read-only: open it without 'version'/'timestamp' to change tables"
            )

    def _write(self, change: Callable[[CatalogTransaction], T], what: str) -> T:
        """Run `change` in one catalog transaction (or stage it in a multi-table one)."""
        self._check_writable()
        if self._staging is not None:
            return change(self._staging)
        txn = self._lake.transaction()
        try:
            result = change(txn)
            self.last_committed_version = txn.commit()
        except CommitConflictError as exc:
            txn.abort()
            raise CommitFailedException(
                f"{what} lost a race with catalog version {exc.version}, which changed "
                f"{exc.key.strip()!r}; nothing was committed: {exc}"
            ) from exc
        except BaseException:
            txn.abort()
            raise
        return result

    @staticmethod
    def _describe(view: Any, ns: str, name: str) -> TableDef:
        try:
            return view.describe_table(ns, name)
        except (ObjectNotFoundError, NamespaceNotFoundError):
            raise NoSuchTableError(f"Table does not exist: {ns}.{name}") from None
        except InvalidNameError as exc:
            raise NoSuchTableError(f"Table does not exist: {ns}.{name} ({exc})") from None

    def _table_from_def(self, ns: str, name: str, tdef: TableDef) -> Table:
        location = tdef.format_properties.get(METADATA_LOCATION)
        if tdef.table_format.upper() != ICEBERG or not location:
            raise NoSuchIcebergTableError(
                f"{ns}.{name} is not an Iceberg table (table_format "
                f"{tdef.table_format or '(none)'!r}, no {METADATA_LOCATION})"
            )
        metadata = self._read_metadata(f"{ns}.{name}", location)
        return Table(
            identifier=(ns, name),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )

    def _load_file_io(
        self, properties: Properties = EMPTY_DICT, location: str | None = None
    ) -> FileIO:
        """PyIceberg's FileIO for a table, confined to the allowed locations."""
        return confined_file_io({**self.properties, **properties}, location)

    def check_location(self, location: str, what: str) -> str:
        """`location` when it lies in the lakehouse's allowed locations (its warehouse and
        `allowed-locations`), else LocationNotAllowedError naming it."""
        return self._policy.check(location, what)

    def _check_table_locations(self, ident: str, metadata: TableMetadata) -> None:
        """The table's own location and its write paths must be allowed too: data and
        metadata files of later commits go there."""
        from pyiceberg.table import TableProperties

        self.check_location(metadata.location, f"table {ident}: location")
        for prop in (
            TableProperties.WRITE_DATA_PATH,
            TableProperties.WRITE_METADATA_PATH,
            "write.object-storage.path",
            "write.folder-storage.path",
        ):
            if metadata.properties.get(prop):
                self.check_location(metadata.properties[prop], f"table {ident}: {prop}")

    def _read_metadata(self, ident: str, location: str) -> TableMetadata:
        """The Iceberg metadata at `location`, checked first; typed errors that never quote
        the file's content."""
        self.check_location(location, f"table {ident}: metadata location")
        io = self._load_file_io(location=location)
        try:
            metadata = FromInputFile.table_metadata(io.new_input(location))
        except LocationNotAllowedError:
            raise
        except FileNotFoundError:
            raise StorageFileNotFoundError(
                location,
                f"table {ident}: its Iceberg metadata file {location!r} is missing",
            ) from None
        except Exception as exc:
            raise NoSuchIcebergTableError(
                f"table {ident}: {location!r} is not readable Iceberg table metadata "
                f"({type(exc).__name__})"
            ) from None
        self._check_table_locations(ident, metadata)
        return metadata

    def _table_def(
        self,
        metadata: TableMetadata,
        metadata_location: str,
        old: TableDef | None,
        table_type: str = MANAGED,
    ) -> TableDef:
        tdef = TableDef()
        if old is not None:
            tdef.CopyFrom(old)
            if old.format_properties.get(METADATA_LOCATION):
                tdef.format_properties[PREVIOUS_METADATA_LOCATION] = old.format_properties[
                    METADATA_LOCATION
                ]
        else:
            tdef.table_type = table_type
        tdef.table_format = ICEBERG
        tdef.format_properties[METADATA_LOCATION] = metadata_location
        schema = metadata.schema()
        tdef.schema.CopyFrom(to_tabledef_schema(schema))
        del tdef.primary_keys[:]
        tdef.primary_keys.extend(schema.identifier_field_ids)
        del tdef.distribution_keys[:]
        tdef.distribution_keys.extend(f.source_id for f in metadata.spec().fields)
        del tdef.sort_keys[:]
        tdef.sort_keys.extend(f.source_id for f in metadata.sort_order().fields)
        return tdef

    # -- tables ---------------------------------------------------------------------

    def load_table(self, identifier: str | Identifier) -> Table:
        ns, name = self._table_ref(identifier)
        return self._table_from_def(ns, name, self._describe(self._view(), ns, name))

    def table_exists(self, identifier: str | Identifier) -> bool:
        ns, name = self._table_ref(identifier)
        try:
            return self._view().object_location("table", ns, name) is not None
        except InvalidNameError:
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
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
        if self.table_exists((ns, name)):
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
        tdef = self._table_def(metadata, metadata_location, None)

        def change(txn: CatalogTransaction) -> None:
            try:
                txn.create_table(ns, name, tdef)
            except AlreadyExistsError:
                raise TableAlreadyExistsError(f"Table {ns}.{name} already exists") from None
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None

        try:
            self._write(change, f"creating table {ns}.{name}")
        except (CommitFailedException, TableAlreadyExistsError, NoSuchNamespaceError):
            _delete_quietly(io, metadata_location)
            if self._staging is None and self.table_exists((ns, name)):
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
            try:
                old = txn.describe_table(ns, name) if overwrite else None
            except ObjectNotFoundError:
                old = None
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
            tdef = self._table_def(metadata, metadata_location, old, EXTERNAL)
            try:
                if old is None:
                    txn.create_table(ns, name, tdef)
                else:
                    txn.replace_table(ns, name, tdef)
            except AlreadyExistsError:
                raise TableAlreadyExistsError(f"Table {ns}.{name} already exists") from None
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None

        self._write(change, f"registering table {ns}.{name}")
        return self.load_table((ns, name))

    def drop_table(self, identifier: str | Identifier) -> None:
        ns, name = self._table_ref(identifier)

        def change(txn: CatalogTransaction) -> None:
            try:
                txn.drop_table(ns, name)
            except (ObjectNotFoundError, NamespaceNotFoundError):
                raise NoSuchTableError(f"Table does not exist: {ns}.{name}") from None

        self._write(change, f"dropping table {ns}.{name}")

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
            try:
                txn.rename_table(ns, name, new_ns, new_name)
            except (ObjectNotFoundError, NamespaceNotFoundError):
                raise NoSuchTableError(f"Table does not exist: {ns}.{name}") from None
            except AlreadyExistsError:
                raise TableAlreadyExistsError(f"Table {new_ns}.{new_name} already exists") from None

        self._write(change, f"renaming table {ns}.{name}")
        return self.load_table((new_ns, new_name))

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        """Apply updates to the table's current metadata and swap its pointer, atomically.

        The pointer is read and replaced in one catalog transaction: if any other commit
        changes this table after the transaction's base version, the catalog commit
        conflicts and this raises CommitFailedException (PyIceberg then refreshes and
        retries). Requirements are checked against the metadata the pointer names.
        """
        self._check_writable()
        ns, name = self._table_ref(table.name())
        written: list[str] = []
        outcome: dict[str, Any] = {}

        def change(txn: CatalogTransaction) -> CommitTableResponse:
            written.clear()
            try:
                old: TableDef | None = txn.describe_table(ns, name)
            except ObjectNotFoundError:
                old = None
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
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
            tdef = self._table_def(staged.metadata, staged.metadata_location, old)
            try:
                if old is None:
                    txn.create_table(ns, name, tdef)
                else:
                    txn.replace_table(ns, name, tdef)
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
            return CommitTableResponse(
                metadata=staged.metadata, metadata_location=staged.metadata_location
            )

        try:
            response = self._write(change, f"commit to table {ns}.{name}")
        except BaseException as exc:
            # only files of a commit known not to have landed are removed
            if written and isinstance(exc, CommitFailedException | TableAlreadyExistsError):
                _delete_quietly(outcome["io"], written[0])
            if (
                isinstance(exc, CommitFailedException)
                and outcome.get("base") is None
                and written
                and self.table_exists((ns, name))
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

    # -- namespaces -----------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Identifier, properties: Properties = EMPTY_DICT
    ) -> None:
        ns = self._namespace_name(namespace)
        props = _string_properties(properties)
        self._check_namespace_location(ns, props)

        def change(txn: CatalogTransaction) -> None:
            try:
                txn.create_namespace(ns, props)
            except AlreadyExistsError:
                raise NamespaceAlreadyExistsError(f"Namespace {ns} already exists") from None

        self._write(change, f"creating namespace {ns}")

    def _check_namespace_location(self, ns: str, props: dict[str, str]) -> None:
        """A namespace `location` is where its new tables go: it must be allowed."""
        if props.get(LOCATION):
            self.check_location(props[LOCATION], f"namespace {ns}: property {LOCATION!r}")

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_name(namespace)

        def change(txn: CatalogTransaction) -> None:
            try:
                txn.drop_namespace(ns)
            except NamespaceNotFoundError:
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
            except TrinityNamespaceNotEmptyError as exc:
                raise NamespaceNotEmptyError(f"Namespace {ns} is not empty: {exc}") from None

        self._write(change, f"dropping namespace {ns}")

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_name(namespace)
        view = self._view()
        try:
            return [(ns, name) for name in view.iter_names("table", ns)]
        except (NamespaceNotFoundError, InvalidNameError):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        if namespace and Catalog.identifier_to_tuple(namespace) != ():
            ns = self._namespace_name(namespace)
            if not self.namespace_exists(ns):
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
            return []  # namespaces have no children in TrinityLake
        view = self._view()
        out: list[Identifier] = []
        after = None
        while True:
            page = view.list_namespaces(after, 1000)
            out.extend((n,) for n in page)
            if len(page) < 1000:
                return out
            after = page[-1]

    def namespace_exists(self, namespace: str | Identifier) -> bool:
        ns = self._namespace_name(namespace)
        try:
            return self._view().namespace_exists(ns)
        except InvalidNameError:
            return False

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        ns = self._namespace_name(namespace)
        try:
            return dict(self._view().describe_namespace(ns).properties)
        except (NamespaceNotFoundError, InvalidNameError):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Properties = EMPTY_DICT,
    ) -> PropertiesUpdateSummary:
        ns = self._namespace_name(namespace)
        new_props = _string_properties(updates)
        self._check_namespace_location(ns, new_props)

        def change(txn: CatalogTransaction) -> PropertiesUpdateSummary:
            try:
                current = dict(txn.describe_namespace(ns).properties)
            except (NamespaceNotFoundError, InvalidNameError):
                raise NoSuchNamespaceError(f"Namespace does not exist: {ns}") from None
            summary, _ = self._get_updated_props_and_update_summary(current, removals, new_props)
            txn.set_namespace_properties(ns, new_props, list(removals or ()))
            return summary

        return self._write(change, f"updating namespace {ns}")

    # -- views: TrinityLake views are ViewDefs, not Iceberg views --------------------

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        """Iceberg views: none (TrinityLake views are ViewDefs; see Lakehouse.list_views)."""
        self._namespace_name(namespace)
        return []

    def view_exists(self, identifier: str | Identifier) -> bool:
        self._table_ref(identifier)
        return False

    def load_view(self, identifier: str | Identifier) -> View:
        raise NoSuchViewError(
            f"View does not exist: {'.'.join(Catalog.identifier_to_tuple(identifier))} "
            "(TrinityLake views are not Iceberg views)"
        )

    def drop_view(self, identifier: str | Identifier) -> None:
        raise NoSuchViewError(
            f"View does not exist: {'.'.join(Catalog.identifier_to_tuple(identifier))} "
            "(TrinityLake views are not Iceberg views)"
        )

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> View:
        raise NotImplementedError("Iceberg views are not supported by the TrinityLake catalog")

    def close(self) -> None:
        if self._staging is not None:
            self._staging.abort()
            self._staging = None


def _string_properties(properties: Properties | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (properties or {}).items():
        if not isinstance(key, str) or value is None:
            raise InvalidArgumentError(
                f"namespace property {key!r}={value!r}: keys and values must be strings"
            )
        out[key] = str(value)
    return out


def _delete_quietly(io: Any, location: str) -> None:
    try:
        io.delete(location)
    except Exception as exc:  # best effort: an orphan file is harmless
        log.warning("could not remove %s after a failed commit: %s", location, exc)


def files_added_by(io: Any, base: TableMetadata | None, staged: TableMetadata) -> list[str]:
    """Files a staged metadata added over `base`: new snapshots' manifest lists, their new
    manifests and the data files those added (what to remove when it never commits)."""
    old_ids = {s.snapshot_id for s in (base.snapshots if base is not None else [])}
    new_snapshots = [s for s in staged.snapshots if s.snapshot_id not in old_ids]
    new_ids = {s.snapshot_id for s in new_snapshots}
    files: list[str] = []
    seen: set[str] = set()
    for snap in new_snapshots:
        files.append(snap.manifest_list)
        for manifest in snap.manifests(io):
            if manifest.added_snapshot_id not in new_ids or manifest.manifest_path in seen:
                continue
            seen.add(manifest.manifest_path)
            files.append(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                if entry.snapshot_id in new_ids and int(entry.status) == 1:  # ADDED
                    files.append(entry.data_file.file_path)
    return files


class MultiTableTransaction:
    """Changes to several tables (and namespaces) committed as one catalog version.

    Inside the block, `mt.load_table(...)`, `mt.create_table(...)`, `mt.drop_table(...)`,
    `mt.create_namespace(...)`, ... behave like the catalog's, except that nothing is
    visible to others until the block ends: every table commit (append, overwrite,
    schema change, ...) is staged in one catalog transaction, reads see the staged state.
    Leaving the block commits; an exception aborts and removes the Iceberg files the
    staged commits wrote. A concurrent commit to one of the same tables makes the commit
    fail with CommitFailedException (retry the whole block).
    """

    def __init__(self, catalog: TrinityCatalog):
        self._parent = catalog
        self.catalog = catalog.staged_in(catalog.lakehouse.transaction())
        self.committed_version: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.catalog, name)

    def __enter__(self) -> MultiTableTransaction:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @property
    def base_version(self) -> int:
        return self.catalog._staging.version

    def commit(self) -> int:
        """Commit every staged change as one catalog version; returns it."""
        txn = self.catalog._staging
        if txn is None:
            raise RuntimeError("this multi-table transaction is already closed")
        try:
            version = txn.commit()
        except CommitConflictError as exc:
            self._cleanup()
            raise CommitFailedException(
                f"multi-table transaction lost a race with catalog version {exc.version}, "
                f"which changed {exc.key.strip()!r}; nothing was committed"
            ) from exc
        except BaseException:
            self._cleanup()
            raise
        finally:
            self.catalog._staging = None
        self.committed_version = version
        self._parent.last_committed_version = version
        return version

    def abort(self) -> None:
        """Forget every staged change and remove the files it wrote."""
        txn = self.catalog._staging
        if txn is None:
            return
        txn.abort()
        self.catalog._staging = None
        self._cleanup()

    def _cleanup(self) -> None:
        io = None
        for _ident, base, location, metadata in reversed(self.catalog._written):
            io = confined_file_io(self.catalog.properties, location)
            try:
                paths = files_added_by(io, base, metadata)
            except Exception as exc:
                log.warning("could not list the files of a staged commit: %s", exc)
                paths = []
            for path in [*paths, location]:
                _delete_quietly(io, path)
        self.catalog._written = []


__all__ = [
    "ICEBERG",
    "METADATA_LOCATION",
    "PREVIOUS_METADATA_LOCATION",
    "MultiTableTransaction",
    "TrinityCatalog",
    "UnsupportedIdentifierError",
    "files_added_by",
    "parse_timestamp",
]
