"""The table methods of `TrinityCatalog`: load, exists, create, register, drop, purge,
rename and commit, each a catalog transaction (or staged in a multi-table one).

An Iceberg table is a `TableDef` pointing at its Iceberg metadata (pointer.py); which
TrinityLake tables are Iceberg ones is decided once (objects.py). `commit_table` reads the
table's pointer and replaces it in the same transaction, so the swap lands only if no
other commit changed that table since (compare-and-swap on the pointer it started from);
a lost race is PyIceberg's `CommitFailedException`, which PyIceberg's commit retry
handles. Files of a commit known not to have landed are removed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pyiceberg.exceptions import (
    CommitFailedException,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import AssertCreate, RemovePropertiesUpdate, SetPropertiesUpdate
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from trinityfs.catalog import CatalogTransaction
from trinityfs.catalog.definitions import TableDef
from trinityfs.catalog.names import check_new_object_name
from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.multitable import delete_quietly
from trinityfs.iceberg.objects import iceberg_table
from trinityfs.iceberg.pointer import EXTERNAL, is_iceberg, metadata_location_of, table_def

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.io import FileIO
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableRequirement, TableUpdate

    from trinityfs.catalog import CatalogSnapshot, Lakehouse
    from trinityfs.iceberg.reclaim import ReclaimReport

T = TypeVar("T")


def _removing_only_set_keys(
    base: TableMetadata | None, updates: tuple[TableUpdate, ...]
) -> tuple[TableUpdate, ...]:
    """`updates` with removals of properties that are not set left out. PyIceberg's
    metadata update raises a bare KeyError for them (a REST 500); Iceberg's Java builder,
    and this server's views, remove what is there: a key not set is nothing to remove."""
    props = set() if base is None else set(base.properties)
    kept: list[TableUpdate] = []
    for update in updates:
        if isinstance(update, SetPropertiesUpdate):
            props |= set(update.updates)
        elif isinstance(update, RemovePropertiesUpdate):
            present = list(dict.fromkeys(k for k in update.removals if k in props))
            props -= set(present)
            if not present:
                continue
            if present != update.removals:
                update = RemovePropertiesUpdate(removals=present)
        kept.append(update)
    return tuple(kept)


class TablesMixin:
    """The table methods of TrinityCatalog (see trinityfs/iceberg/catalog.py for _write,
    _view, _table_ref and the staging of multi-table transactions)."""

    if TYPE_CHECKING:  # provided by TrinityCatalog (and PyIceberg's Catalog)
        _lake: Lakehouse
        _staging: CatalogTransaction | None
        _written: list[tuple[Identifier, TableMetadata | None, str, TableMetadata]]

        def _write(
            self, change: Callable[[CatalogTransaction], T], what: str, **subject: str | bool
        ) -> T: ...
        def _view(self) -> CatalogSnapshot | CatalogTransaction: ...
        def _table_ref(self, identifier: str | Identifier) -> tuple[str, str]: ...
        def _check_writable(self) -> None: ...
        def namespace_exists(self, namespace: str | Identifier) -> bool: ...
        def check_location(self, location: str, what: str) -> str: ...
        def _check_table_locations(self, ident: str, metadata: TableMetadata) -> None: ...
        def _read_metadata(self, ident: str, location: str) -> TableMetadata: ...
        def _load_file_io(
            self, properties: Properties = EMPTY_DICT, location: str | None = None
        ) -> FileIO: ...
        def _resolve_table_location(
            self, location: str | None, database_name: str, table_name: str
        ) -> str: ...
        def _convert_schema_if_needed(self, schema: Any, format_version: int = ...) -> Schema: ...
        def _write_metadata(
            self, metadata: TableMetadata, io: FileIO, metadata_path: str
        ) -> None: ...
        def _update_and_stage_table(
            self,
            current_table: Table | None,
            table_identifier: Identifier,
            requirements: tuple[TableRequirement, ...],
            updates: tuple[TableUpdate, ...],
        ) -> Any: ...

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

    def check_new_table_name(self, ns: str, name: str) -> None:
        """InvalidNameError (a ValueError; NameTooLongError for its length) for a table
        name the catalog would refuse to create, checked before any file is written for
        it (a lookup treats a name no table can have as missing: `name_taken`)."""
        with iceberg_errors(f"table {ns}.{name}", table=f"{ns}.{name}"):
            check_new_object_name(self._view(), "table", ns, name)

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
        self.check_new_table_name(ns, name)
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
        except (CommitFailedException, TableAlreadyExistsError, NoSuchNamespaceError, ValueError):
            # known not committed (a name the catalog refuses is an InvalidNameError, a
            # ValueError): the metadata file written for it is removed
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
            if (new_ns, new_name) == (ns, name):
                # the destination exists (it is the source): refused as onto any existing
                # table (REST 409), as the Java reference catalogs do; nothing committed
                raise TableAlreadyExistsError(
                    f"Table {ns}.{name} already exists: a table cannot be renamed to its own name"
                )
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
            base = None if current is None else current.metadata
            staged = self._update_and_stage_table(
                current, (ns, name), requirements, _removing_only_set_keys(base, updates)
            )
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


__all__ = ["TablesMixin"]
