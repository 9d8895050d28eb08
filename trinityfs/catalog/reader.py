"""Read operations of the catalog, shared by snapshots and transactions.

Everything here works through three primitives of the underlying view (`get`,
`scan_prefix`, `read_file`), so reads inside a transaction see its own writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from google.protobuf.message import Message

from trinityfs.catalog.model import OBJECT_KINDS, Kind, ObjectRef
from trinityfs.errors import NamespaceNotFoundError, ObjectNotFoundError
from trinityfs.format.definitions import decode_definition
from trinityfs.format.keys import KeyCodec
from trinityfs.format.names import validate_name
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef, TableDef, ViewDef

DEFINITION_TYPES: dict[str, type[Message]] = {
    "namespace": NamespaceDef,
    "table": TableDef,
    "view": ViewDef,
}
PAGE_SIZE = 1000


class KeyValueView(Protocol):
    lakehouse_def: LakehouseDef

    def get(self, key: str) -> str | None: ...

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]: ...


class CatalogReader:
    """Namespaces, tables and views of one view of the tree."""

    def __init__(self, view: Any, read_file: Any, version: int):
        self._view = view
        self._read_file = read_file
        self.version = version
        self.keys = KeyCodec.from_lakehouse_def(view.lakehouse_def)

    @property
    def lakehouse_def(self) -> LakehouseDef:
        return self._view.lakehouse_def

    # -- names ----------------------------------------------------------------------

    def _max_bytes(self, kind: Kind) -> int:
        ldef = self.lakehouse_def
        return {
            "namespace": ldef.namespace_name_max_size_bytes,
            "table": ldef.table_name_max_size_bytes,
            "view": ldef.view_name_max_size_bytes,
        }[kind]

    def _valid(self, kind: Kind, name: str) -> str:
        return validate_name(name, self._max_bytes(kind), kind)

    # -- namespaces -----------------------------------------------------------------

    def namespace_exists(self, namespace: str) -> bool:
        return self._view.get(self.keys.namespace_key(namespace)) is not None

    def _namespace_location(self, namespace: str) -> str:
        location = self._view.get(self.keys.namespace_key(namespace))
        if location is None:
            raise NamespaceNotFoundError(
                f"namespace {namespace!r} does not exist at version {self.version}"
            )
        return location

    def describe_namespace(self, namespace: str) -> NamespaceDef:
        location = self._namespace_location(namespace)
        return decode_definition(self._read_file(location), NamespaceDef, location)

    def namespace_properties(self, namespace: str) -> dict[str, str]:
        return dict(self.describe_namespace(namespace).properties)

    def list_namespaces(
        self, start_after: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Namespace names in order, after `start_after`, at most `limit`."""
        prefix = self.keys.kind_prefix("namespace")
        after = None if start_after is None else self.keys.namespace_key(start_after)
        return [
            self.keys.decode(k).namespace for k, _ in self._view.scan_prefix(prefix, after, limit)
        ]

    # -- tables and views -----------------------------------------------------------

    def object_location(self, kind: Kind, namespace: str, name: str) -> str | None:
        key = self.keys.object_key(kind, namespace, name)  # validates both names
        return self._view.get(key)

    def object_kind(self, namespace: str, name: str) -> Kind | None:
        """'table' or 'view' when `namespace.name` exists, else None."""
        for kind in OBJECT_KINDS:
            if self.object_location(kind, namespace, name) is not None:
                return kind
        return None

    def describe(self, kind: Kind, namespace: str, name: str) -> Message:
        location = self.object_location(kind, namespace, name)
        if location is None:
            self._namespace_location(namespace)
            raise ObjectNotFoundError(
                f"{kind} {namespace}.{name} does not exist at version {self.version}"
            )
        return decode_definition(self._read_file(location), DEFINITION_TYPES[kind], location)

    def describe_table(self, namespace: str, name: str) -> TableDef:
        return self.describe("table", namespace, name)

    def describe_view(self, namespace: str, name: str) -> ViewDef:
        return self.describe("view", namespace, name)

    def list_names(
        self, kind: Kind, namespace: str, start_after: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Names of `kind` in a namespace, in order (one key-range scan, no definition read)."""
        self._namespace_location(namespace)
        prefix = self.keys.children_prefix(kind, namespace)
        after = None
        if start_after is not None:
            after = self.keys.object_key(kind, namespace, start_after)
        return [self.keys.decode(k).name for k, _ in self._view.scan_prefix(prefix, after, limit)]

    def list_tables(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.list_names("table", namespace, start_after, limit)

    def list_views(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.list_names("view", namespace, start_after, limit)

    def iter_names(self, kind: Kind, namespace: str) -> Iterator[str]:
        """Every name of `kind` in a namespace, fetched a page at a time."""
        after = None
        while True:
            page = self.list_names(kind, namespace, after, PAGE_SIZE)
            yield from page
            if len(page) < PAGE_SIZE:
                return
            after = page[-1]

    def list_objects(self, namespace: str) -> list[ObjectRef]:
        """Tables and views of a namespace, ordered by name."""
        refs = [
            ObjectRef(namespace, name, kind)
            for kind in OBJECT_KINDS
            for name in self.iter_names(kind, namespace)
        ]
        return sorted(refs, key=lambda r: r.name)

    def iter_all(self) -> Iterator[tuple[ObjectRef, str]]:
        """Every namespace, table and view with its definition location, in key order."""
        for kind in ("namespace", *OBJECT_KINDS):
            after = None
            while True:
                page = self._view.scan_prefix(self.keys.kind_prefix(kind), after, PAGE_SIZE)
                for key, location in page:
                    ok = self.keys.decode(key)
                    yield ObjectRef(ok.namespace, ok.name, ok.kind), location
                if len(page) < PAGE_SIZE:
                    break
                after = page[-1][0]

    def read_definition(self, ref: ObjectRef, location: str) -> Message:
        return decode_definition(self._read_file(location), DEFINITION_TYPES[ref.kind], location)
