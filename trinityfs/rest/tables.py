"""Table changes over REST: create (and staged create), commit, drop, rename, register,
and multi-table transactions, each one catalog version made by `TrinityCatalog`.

A commit is compare-and-swap twice over: the Iceberg requirements are checked against the
metadata the table's pointer names inside the catalog transaction, and the transaction
conflicts if another writer changed the table after it began (409 CommitFailedException,
which clients retry). A commit without `assert-create` must find the table, and the
server adds `assert-table-uuid` when the client did not, so a table dropped and created
again in between is never overwritten by a commit meant for its predecessor.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from pyiceberg.exceptions import (
    NoSuchNamespaceError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import (
    AssertCreate,
    AssertTableUUID,
    SetLocationUpdate,
    SetPropertiesUpdate,
    TableRequirement,
    TableUpdate,
)
from pyiceberg.typedef import Identifier

from trinityfs.rest import requests as rq
from trinityfs.rest.errors import RestError, bad_request, forbidden
from trinityfs.rest.locations import safe_segment
from trinityfs.rest.selector import Pin
from trinityfs.rest.service import PATH_PROPERTIES, RestCatalogService, is_class_property

if TYPE_CHECKING:
    from pyiceberg.table.metadata import TableMetadata

log = logging.getLogger("trinityfs.rest")

_REQUIREMENTS: TypeAdapter[tuple[TableRequirement, ...]] = TypeAdapter(tuple[TableRequirement, ...])
_UPDATES: TypeAdapter[tuple[TableUpdate, ...]] = TypeAdapter(tuple[TableUpdate, ...])
LATEST = Pin(None, "latest")


class _Named:
    """What TrinityCatalog.commit_table needs of a table: its identifier."""

    def __init__(self, ns: str, name: str):
        self._identifier: Identifier = (ns, name)

    def name(self) -> Identifier:
        return self._identifier


class TableChange:
    """One table's parsed requirements and updates."""

    def __init__(self, ns: str, name: str, requirements: tuple, updates: tuple):
        self.ns = ns
        self.name = name
        self.requirements = requirements
        self.updates = updates

    @property
    def creates(self) -> bool:
        return any(isinstance(r, AssertCreate) for r in self.requirements)


class TableService:
    """The table endpoints' logic over a RestCatalogService."""

    def __init__(self, service: RestCatalogService):
        self.service = service
        self.catalog = service.catalog
        self.policy = service.policy

    # -- checks ---------------------------------------------------------------------

    def check_properties(self, props: dict[str, str]) -> None:
        for key, value in props.items():
            if is_class_property(key):
                raise forbidden(
                    f"table property {key!r} names a class for the server to load; it cannot "
                    "be set through the REST catalog"
                )
            if key in PATH_PROPERTIES:
                self.policy.check(value, f"table property {key}")

    def check_metadata(self, metadata: TableMetadata, what: str) -> None:
        self.policy.check(metadata.location, f"location of {what}")
        self.check_properties(dict(metadata.properties))

    def parse_change(self, body: dict[str, Any], ns: str | None, name: str | None) -> TableChange:
        ident = body.get("identifier")
        if ident is not None or ns is None:
            body_ns, body_name = rq.identifier_json(ident, "identifier")
            if ns is not None and (body_ns, body_name) != (ns, name):
                raise bad_request(
                    f"identifier {body_ns}.{body_name} in the body does not match the table "
                    f"{ns}.{name} of the path"
                )
            ns, name = body_ns, body_name
        requirements = rq.validated(
            _REQUIREMENTS.validate_python, body.get("requirements") or [], "requirements"
        )
        updates = rq.validated(_UPDATES.validate_python, body.get("updates") or [], "updates")
        for update in updates:
            if isinstance(update, SetLocationUpdate):
                self.policy.check(update.location)
            elif isinstance(update, SetPropertiesUpdate):
                self.check_properties(update.updates)
        change = TableChange(ns, name, requirements, updates)
        if change.creates and not any(isinstance(u, SetLocationUpdate) for u in updates):
            raise bad_request(
                f"a create commit to {ns}.{name} (assert-create) needs a set-location update"
            )
        return change

    def _guard(self, change: TableChange) -> tuple[TableRequirement, ...]:
        """The requirements to commit with: the table must exist (404) unless created, and
        must still be the same table (assert-table-uuid) when the client did not say."""
        if change.creates:
            return change.requirements
        current = self.service.load_table(LATEST, change.ns, change.name)
        if any(isinstance(r, AssertTableUUID) for r in change.requirements):
            return change.requirements
        return (*change.requirements, AssertTableUUID(uuid=current.metadata.table_uuid))

    # -- endpoints ------------------------------------------------------------------

    def create(self, ns: str, body: dict[str, Any]) -> bytes:
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise bad_request("name must be a non-empty string")
        if body.get("schema") is None:
            raise bad_request("schema is required")
        schema = rq.validated(Schema.model_validate, body["schema"], "schema")
        spec = body.get("partition-spec")
        if spec is None:
            spec = UNPARTITIONED_PARTITION_SPEC
        else:
            spec = rq.validated(PartitionSpec.model_validate, spec, "partition-spec")
        order = body.get("write-order")
        if order is None:
            order = UNSORTED_SORT_ORDER
        else:
            order = rq.validated(SortOrder.model_validate, order, "write-order")
        props = rq.string_map(body.get("properties"), "properties")
        self.check_properties(props)
        stage = rq.optional_bool(body.get("stage-create"), "stage-create")
        location = body.get("location")
        if location is not None and not isinstance(location, str):
            raise bad_request("location must be a string")
        if not location:
            location = self._default_location(ns, name)
        location = self.policy.check(location)
        if stage:
            return self._stage(ns, name, schema, spec, order, props, location)
        table = self.catalog.create_table((ns, name), schema, location, spec, order, props)
        return self.service.loaded(ns, name, table.metadata_location, table.metadata).body

    def _default_location(self, ns: str, name: str) -> str:
        """Where a table goes without a location: the namespace's `location` property, else
        <warehouse>/<namespace>/<table> (as TrinityCatalog places it)."""
        safe_segment(name, "table")
        props = self.catalog.load_namespace_properties((ns,))
        if props.get("location"):
            return props["location"].rstrip("/") + "/" + name
        safe_segment(ns, "namespace")
        warehouse = str(self.catalog.properties["warehouse"]).rstrip("/")
        return f"{warehouse}/{ns}/{name}"

    def _stage(
        self,
        ns: str,
        name: str,
        schema: Schema,
        spec: PartitionSpec,
        order: SortOrder,
        props: dict[str, str],
        location: str,
    ) -> bytes:
        """A staged create: metadata to start a create transaction, nothing committed."""
        if not self.catalog.namespace_exists((ns,)):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
        if self.catalog.name_taken((ns, name)):
            raise TableAlreadyExistsError(f"Table {ns}.{name} already exists")
        metadata = new_table_metadata(
            schema=schema,
            partition_spec=spec,
            sort_order=order,
            location=location,
            properties=props,
        )
        body = self.service.loaded(ns, name, "", metadata).body
        return body.replace(b'"metadata-location":""', b'"metadata-location":null', 1)

    def commit(self, ns: str, name: str, body: dict[str, Any]) -> bytes:
        change = self.parse_change(body, ns, name)
        requirements = self._guard(change)
        response = self.catalog.commit_table(
            _Named(change.ns, change.name), requirements, change.updates
        )
        return response.model_dump_json().encode()

    def commit_transaction(self, body: dict[str, Any]) -> None:
        """Every table change of the body in ONE catalog version, or none of them."""
        raw = body.get("table-changes")
        if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
            raise bad_request("table-changes must be a list of table commit objects")
        changes = [self.parse_change(c, None, None) for c in raw]
        if not changes:
            return
        guarded = [(c, self._guard(c)) for c in changes]
        # on failure only the metadata files the server wrote are removed: the data files
        # and manifests are the client's, which may commit them again (e.g. one by one)
        txn = self.catalog.multi_table_transaction(remove_added_files=False)
        try:
            for change, requirements in guarded:
                txn.commit_table(_Named(change.ns, change.name), requirements, change.updates)
            version = txn.commit()
        except BaseException:
            txn.abort()
            raise
        log.info("transaction of %d table changes committed as version %d", len(changes), version)

    def drop(self, ns: str, name: str, purge: bool) -> None:
        """Drop the table from the catalog. With purge its files stay too: every older
        catalog version still names them (time travel), so TrinityCatalog.purge_table
        leaves them to reclaim_files(), which deletes only what no kept version uses."""
        if purge:
            self.catalog.purge_table((ns, name))
        else:
            self.catalog.drop_table((ns, name))

    def rename(self, body: dict[str, Any]) -> None:
        src = rq.identifier_json(body.get("source"), "source", for_write=False)
        dst = rq.identifier_json(body.get("destination"), "destination")
        # a non-Iceberg source is NoSuchIcebergTableError (404), nothing renamed, as GET
        self.catalog.rename_table(src, dst)

    def register(self, ns: str, body: dict[str, Any]) -> bytes:
        name = body.get("name")
        location = body.get("metadata-location")
        if not isinstance(name, str) or not name:
            raise bad_request("name must be a non-empty string")
        if not isinstance(location, str) or not location:
            raise bad_request("metadata-location must be a non-empty string")
        overwrite = rq.optional_bool(body.get("overwrite"), "overwrite")
        self.policy.check(location, "metadata location")
        what = f"the table to register as {ns}.{name}"
        try:
            metadata = self.service.read_metadata(location, what)
        except RestError as exc:
            raise bad_request(f"cannot register {ns}.{name}: {exc.message}") from None
        self.check_metadata(metadata, what)
        if not self.catalog.namespace_exists((ns,)):
            raise NoSuchNamespaceError(f"Namespace does not exist: {ns}")
        table = self.catalog.register_table((ns, name), location, overwrite=overwrite)
        return self.service.loaded(ns, name, table.metadata_location, table.metadata).body


__all__ = ["TableChange", "TableService"]
