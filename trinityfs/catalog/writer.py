"""Write operations of the catalog: a `CatalogTransaction` commits them as one version."""

from __future__ import annotations

import uuid
from typing import Any

from google.protobuf.message import Message

from trinityfs.catalog.model import OBJECT_KINDS, Kind
from trinityfs.catalog.reader import DEFINITION_TYPES, CatalogReader
from trinityfs.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NamespaceNotEmptyError,
    ObjectNotFoundError,
)
from trinityfs.format.definitions import definition_from_json_dict, encode_definition
from trinityfs.format.paths import new_definition_location
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef
from trinityfs.txn.commute import PropertyUpdate
from trinityfs.txn.transaction import Transaction

Definition = Message | dict[str, Any] | None


def as_definition(kind: Kind, definition: Definition) -> Message:
    """A protobuf definition of `kind` from a message, a JSON-style dict, or None (empty)."""
    cls = DEFINITION_TYPES[kind]
    if definition is None:
        return cls()
    if isinstance(definition, dict):
        return definition_from_json_dict(definition, cls)
    if not isinstance(definition, cls):
        raise InvalidArgumentError(
            f"a {kind} definition must be a {cls.__name__}, not {type(definition).__name__}"
        )
    copy = cls()
    copy.CopyFrom(definition)
    return copy


class CatalogTransaction(CatalogReader):
    """Reads (seeing its own writes) and writes, committed atomically by `commit()`.

    Use as a context manager: leaving the block commits, an exception aborts.
    """

    def __init__(self, txn: Transaction):
        super().__init__(txn, txn.read_file, txn.base_version)
        self.txn = txn

    def __enter__(self) -> CatalogTransaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def commit(self) -> int:
        """Commit; returns the new version (the base version when nothing changed)."""
        return self.txn.commit()

    def abort(self) -> None:
        self.txn.abort()

    # -- helpers --------------------------------------------------------------------

    def _store(
        self,
        kind: Kind,
        key: str,
        namespace: str,
        name: str | None,
        msg: Message,
        reapply: PropertyUpdate | None = None,
    ) -> None:
        if not msg.id:
            msg.id = str(uuid.uuid4())
        location = new_definition_location(kind, namespace, name)
        self.txn.put(key, location, encode_definition(msg), reapply)

    def _claim_name(self, kind: Kind, namespace: str, name: str) -> None:
        """Refuse a taken name, and conflict if a concurrent commit takes it as the other kind."""
        existing = self.object_kind(namespace, name)
        if existing is not None:
            raise AlreadyExistsError(f"{existing} {namespace}.{name} already exists")
        for other in OBJECT_KINDS:
            if other != kind:
                self.txn.require_unchanged(self.keys.object_key(other, namespace, name))

    def _require_namespace(self, namespace: str) -> str:
        self._namespace_location(namespace)
        key = self.keys.namespace_key(namespace)
        self.txn.require_exists(key)
        return key

    # -- namespaces -----------------------------------------------------------------

    def create_namespace(
        self, namespace: str, properties: dict[str, str] | None = None, *, exist_ok: bool = False
    ) -> None:
        key = self.keys.namespace_key(namespace)
        if self._view.get(key) is not None:
            if exist_ok:
                return
            raise AlreadyExistsError(f"namespace {namespace!r} already exists")
        msg = NamespaceDef(properties=properties or {})
        self._store("namespace", key, namespace, None, msg)

    def replace_namespace(self, namespace: str, definition: Definition) -> None:
        key = self.keys.namespace_key(namespace)
        old = self.describe_namespace(namespace)
        msg = as_definition("namespace", definition)
        if not msg.id:
            msg.id = old.id
        self._store("namespace", key, namespace, None, msg)

    def set_namespace_properties(
        self, namespace: str, updates: dict[str, str] | None = None, removals=()
    ) -> None:
        msg = self.describe_namespace(namespace)
        updates = dict(updates or {})
        removals = list(removals)
        for name, value in [*updates.items(), *((r, "") for r in removals)]:
            if not isinstance(name, str) or not isinstance(value, str):
                raise InvalidArgumentError("namespace properties are strings")
        key = self.keys.namespace_key(namespace)
        # Updates of different property names commute with concurrent ones (txn/commute.py)
        # unless this transaction wrote the namespace some other way (created, replaced).
        update = self.txn.reapply_of(key)
        if not isinstance(update, PropertyUpdate) and key not in self.txn.pending:
            update = PropertyUpdate(
                key, NamespaceDef, "namespace", namespace, None, f"namespace {namespace!r}"
            )
        if isinstance(update, PropertyUpdate):
            update.touch(dict(msg.properties), updates, removals)
        for name in removals:
            msg.properties.pop(name, None)
        for name, value in updates.items():
            msg.properties[name] = value
        self._store("namespace", key, namespace, None, msg, update)

    def drop_namespace(self, namespace: str, *, cascade: bool = False) -> None:
        """Drop a namespace; with cascade its tables and views too, else it must be empty."""
        key = self.keys.namespace_key(namespace)
        self._namespace_location(namespace)
        for kind in OBJECT_KINDS:
            names = list(self.iter_names(kind, namespace))
            if names and not cascade:
                raise NamespaceNotEmptyError(
                    f"namespace {namespace!r} is not empty ({len(names)} {kind}s, first "
                    f"{names[0]!r}); drop them first or use cascade"
                )
            for name in names:
                self.txn.delete(self.keys.object_key(kind, namespace, name))
            self.txn.require_unchanged_prefix(self.keys.children_prefix(kind, namespace))
        self.txn.delete(key)

    # -- tables and views -----------------------------------------------------------

    def create(self, kind: Kind, namespace: str, name: str, definition: Definition = None) -> None:
        self._valid(kind, name)
        self._require_namespace(namespace)
        self._claim_name(kind, namespace, name)
        msg = as_definition(kind, definition)
        self._store(kind, self.keys.object_key(kind, namespace, name), namespace, name, msg)

    def replace(self, kind: Kind, namespace: str, name: str, definition: Definition) -> None:
        old = self.describe(kind, namespace, name)
        msg = as_definition(kind, definition)
        if not msg.id:
            msg.id = old.id
        self._store(kind, self.keys.object_key(kind, namespace, name), namespace, name, msg)

    def drop(self, kind: Kind, namespace: str, name: str) -> None:
        if self.object_location(kind, namespace, name) is None:
            self._namespace_location(namespace)
            raise ObjectNotFoundError(f"{kind} {namespace}.{name} does not exist")
        self.txn.delete(self.keys.object_key(kind, namespace, name))

    def rename(
        self, kind: Kind, namespace: str, name: str, new_namespace: str, new_name: str
    ) -> None:
        """Move a table or view to a new name, in the same or another namespace."""
        msg = self.describe(kind, namespace, name)
        if (namespace, name) == (new_namespace, new_name):
            return
        self._valid(kind, new_name)
        self._require_namespace(new_namespace)
        self._claim_name(kind, new_namespace, new_name)
        self.txn.delete(self.keys.object_key(kind, namespace, name))
        key = self.keys.object_key(kind, new_namespace, new_name)
        self._store(kind, key, new_namespace, new_name, msg)

    def create_table(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("table", namespace, name, definition)

    def replace_table(self, namespace: str, name: str, definition: Definition) -> None:
        self.replace("table", namespace, name, definition)

    def drop_table(self, namespace: str, name: str) -> None:
        self.drop("table", namespace, name)

    def rename_table(self, namespace: str, name: str, new_namespace: str, new_name: str) -> None:
        self.rename("table", namespace, name, new_namespace, new_name)

    def create_view(self, namespace: str, name: str, definition: Definition = None) -> None:
        self.create("view", namespace, name, definition)

    def replace_view(self, namespace: str, name: str, definition: Definition) -> None:
        self.replace("view", namespace, name, definition)

    def drop_view(self, namespace: str, name: str) -> None:
        self.drop("view", namespace, name)

    def rename_view(self, namespace: str, name: str, new_namespace: str, new_name: str) -> None:
        self.rename("view", namespace, name, new_namespace, new_name)

    # -- the lakehouse definition ---------------------------------------------------

    def set_lakehouse_def(self, ldef: LakehouseDef) -> None:
        """Commit a new LakehouseDef (properties, exports); order and name limits are fixed."""
        old = self.lakehouse_def
        for field in (
            "id",
            "major_version",
            "order",
            "namespace_name_max_size_bytes",
            "table_name_max_size_bytes",
            "view_name_max_size_bytes",
        ):
            if getattr(ldef, field) != getattr(old, field):
                raise InvalidArgumentError(f"{field} of a lakehouse cannot change after creation")
        self.txn.set_lakehouse_def(ldef)
