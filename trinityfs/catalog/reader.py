"""Read operations of the catalog, shared by snapshots and transactions.

Everything here works through three primitives of the underlying view (`get`,
`scan_prefix`, `read_file`), so reads inside a transaction see its own writes.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from google.protobuf.message import Message

from trinityfs.catalog.model import OBJECT_KINDS, Kind, ObjectRef
from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    NamespaceNotFoundError,
    ObjectNotFoundError,
)
from trinityfs.format.definitions import decode_definition
from trinityfs.format.keys import KeyCodec
from trinityfs.format.names import validate_name
from trinityfs.format.paths import definition_owner_problem
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef, TableDef, ViewDef

DEFINITION_TYPES: dict[str, type[Message]] = {
    "namespace": NamespaceDef,
    "table": TableDef,
    "view": ViewDef,
}
PAGE_SIZE = 1000
T = TypeVar("T")
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


def checked_limit(limit: int | None) -> int | None:
    """`limit` of a listing: None (all) or an int >= 0. A negative, fractional or boolean
    limit is an error, not an empty or truncated page."""
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0):
        return limit
    raise InvalidArgumentError(
        f"a listing's limit must be a whole number >= 0 (or None for all), got {limit!r}"
    )


def checked_page_size(page_size: int) -> int:
    """`page_size` of a paged listing: an int >= 1 (InvalidArgumentError otherwise)."""
    if isinstance(page_size, int) and not isinstance(page_size, bool) and page_size >= 1:
        return page_size
    raise InvalidArgumentError(
        f"a listing's page_size must be a whole number >= 1, got {page_size!r}"
    )


def paged(
    fetch: Callable[[T | None, int], list[T]],
    start_after: T | None = None,
    page_size: int = PAGE_SIZE,
) -> Iterator[T]:
    """Every item of a listing read a page at a time: `fetch(after, limit)` returns up to
    `limit` items after `after` in order; the last item of a page is the next `after`."""
    checked_page_size(page_size)
    after = start_after
    while True:
        page = fetch(after, page_size)
        yield from page
        if len(page) < page_size:
            return
        after = page[-1]


class KeyValueView(Protocol):
    lakehouse_def: LakehouseDef

    def get(self, key: str) -> str | None: ...

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]: ...


class CatalogReader:
    """Namespaces, tables and views of one view of the tree."""

    def __init__(self, view: KeyValueView, read_file: Callable[[str], bytes], version: int):
        self._view = view
        self._read_file = read_file
        self.version = version
        self.keys = KeyCodec.from_lakehouse_def(view.lakehouse_def)

    @property
    def lakehouse_def(self) -> LakehouseDef:
        return self._view.lakehouse_def

    def _decode(self, location: str, cls: type[Message]) -> Message:
        """A definition file, verified; a corrupt one names the file and this version."""
        try:
            return decode_definition(self._read_file(location), cls, location)
        except CorruptFileError as exc:
            raise exc.with_version(self.version) from None

    def _decode_of(
        self, kind: Kind | str, namespace: str, name: str | None, location: str
    ) -> Message:
        """`_decode` of the definition file a key of `kind` `namespace`.`name` points
        at, refused when its name says it is another object's (a node file that lies:
        docs/FORMAT-CHOICES.md "A key pointing at another object's definition")."""
        problem = definition_owner_problem(location, kind, namespace, name)
        if problem is not None:
            raise CorruptFileError(location, problem, self.version)
        return self._decode(location, DEFINITION_TYPES[kind])

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

    def _namespace_location(self, namespace: str, key: str | None = None) -> str:
        """The namespace's definition location (`key`: its key, when the caller has it)."""
        location = self._view.get(self.keys.namespace_key(namespace) if key is None else key)
        if location is None:
            raise NamespaceNotFoundError(
                f"namespace {namespace!r} does not exist at version {self.version}"
            )
        return location

    def describe_namespace(self, namespace: str) -> NamespaceDef:
        location = self._namespace_location(namespace)
        return self._decode_of("namespace", namespace, None, location)

    def namespace_properties(self, namespace: str) -> dict[str, str]:
        return dict(self.describe_namespace(namespace).properties)

    def list_namespaces(
        self, start_after: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Namespace names in order, after `start_after`, at most `limit`."""
        limit = checked_limit(limit)
        prefix = self.keys.kind_prefix("namespace")
        after = None if start_after is None else self.keys.namespace_key(start_after)
        keys = list(map(_first, self._view.scan_prefix(prefix, after, limit)))
        return self.keys.decode_namespaces(keys)

    # -- tables and views -----------------------------------------------------------

    def object_location(self, kind: Kind, namespace: str, name: str) -> str | None:
        key = self.keys.object_key(kind, namespace, name)  # validates both names
        return self._view.get(key)

    def locate(self, namespace: str, name: str) -> tuple[Kind, str] | None:
        """(kind, definition location) of the table or view `namespace.name`, or None."""
        for kind, key in self.keys.object_keys(namespace, name, remember=True).items():
            location = self._view.get(key)
            if location is not None:
                return kind, location  # type: ignore[return-value]
        return None

    def object_kind(self, namespace: str, name: str) -> Kind | None:
        """'table' or 'view' when `namespace.name` exists, else None."""
        found = self.locate(namespace, name)
        return None if found is None else found[0]

    def describe(self, kind: Kind, namespace: str, name: str) -> Message:
        location = self.object_location(kind, namespace, name)
        if location is None:
            self._namespace_location(namespace)
            raise ObjectNotFoundError(
                f"{kind} {namespace}.{name} does not exist at version {self.version}"
            )
        return self._decode_of(kind, namespace, name, location)

    def describe_table(self, namespace: str, name: str) -> TableDef:
        return self.describe("table", namespace, name)

    def describe_view(self, namespace: str, name: str) -> ViewDef:
        return self.describe("view", namespace, name)

    def list_names(
        self, kind: Kind, namespace: str, start_after: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Names of `kind` in a namespace, in order (one key-range scan, no definition read)."""
        pairs = self._children(kind, namespace, start_after, limit)
        return self.keys.decode_names(kind, namespace, list(map(_first, pairs)))

    def list_names_and_locations(
        self, kind: Kind, namespace: str, start_after: str | None = None, limit: int | None = None
    ) -> tuple[list[str], list[str]]:
        """`list_names` and each name's definition location, from the same one scan (no
        definition read; the Iceberg front ends judge definitions by location)."""
        pairs = self._children(kind, namespace, start_after, limit)
        names = self.keys.decode_names(kind, namespace, list(map(_first, pairs)))
        return names, list(map(_second, pairs))

    def _children(
        self, kind: Kind, namespace: str, start_after: str | None, limit: int | None
    ) -> list[tuple[str, str]]:
        """(key, location) of the `kind` objects of a namespace after `start_after`: one
        key-range scan (NamespaceNotFoundError when the namespace does not exist)."""
        limit = checked_limit(limit)
        self._namespace_location(namespace)
        prefix = self.keys.children_prefix(kind, namespace)
        after = None
        if start_after is not None:
            after = self.keys.object_key(kind, namespace, start_after)
        return self._view.scan_prefix(prefix, after, limit)

    def list_tables(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.list_names("table", namespace, start_after, limit)

    def list_views(self, namespace: str, start_after: str | None = None, limit: int | None = None):
        return self.list_names("view", namespace, start_after, limit)

    def iter_names(
        self,
        kind: Kind,
        namespace: str,
        start_after: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[str]:
        """Every name of `kind` in a namespace after `start_after`, a page at a time."""
        return paged(
            lambda after, limit: self.list_names(kind, namespace, after, limit),
            start_after,
            page_size,
        )

    def iter_namespaces(
        self, start_after: str | None = None, page_size: int = PAGE_SIZE
    ) -> Iterator[str]:
        """Every namespace name after `start_after`, in order, a page at a time."""
        return paged(self.list_namespaces, start_after, page_size)

    def _name_pages(
        self, kind: Kind, namespace: str, start_after: str | None, page_size: int
    ) -> Iterator[list[str]]:
        """The pages `iter_names` reads (non-empty ones)."""
        checked_page_size(page_size)
        after = start_after
        while True:
            page = self.list_names(kind, namespace, after, page_size)
            if page:
                yield page
            if len(page) < page_size:
                return
            after = page[-1]

    def iter_object_names(
        self, namespace: str, start_after: str | None = None, page_size: int = PAGE_SIZE
    ) -> Iterator[tuple[str, Kind]]:
        """(name, kind) of the tables and views of a namespace after `start_after`,
        ordered by name, read a page at a time (memory bounded by the page size)."""

        def names(kind: Kind) -> Iterator[tuple[str, Kind]]:
            for page in self._name_pages(kind, namespace, start_after, page_size):
                yield from zip(page, itertools.repeat(kind))

        def merged() -> Iterator[tuple[str, Kind]]:
            streams = [names(kind) for kind in OBJECT_KINDS]
            heads = [(head, stream) for stream in streams if (head := next(stream, None))]
            if len(heads) == 1:  # most namespaces hold one kind: no merge per name
                yield heads[0][0]
                yield from heads[0][1]
                return
            yield from heapq.merge(
                *(itertools.chain([head], stream) for head, stream in heads),
                key=operator.itemgetter(0),
            )

        return merged()

    def object_name_columns(
        self, namespace: str, start_after: str | None = None, page_size: int = PAGE_SIZE
    ) -> tuple[list[str], list[Kind]]:
        """`iter_object_names` as two lists, names and kinds: a listing of many names
        built a page at a time by list extends (no tuple and no generator step per
        name; the kinds of a namespace of one kind are one repeated string)."""
        columns: list[tuple[list[str], Kind]] = []
        for kind in OBJECT_KINDS:
            names: list[str] = []
            for page in self._name_pages(kind, namespace, start_after, page_size):
                names.extend(page)
            if names:
                columns.append((names, kind))
        if len(columns) < 2:
            names, kind = columns[0] if columns else ([], "table")
            return names, [kind] * len(names)
        merged = list(
            heapq.merge(
                *(zip(names, itertools.repeat(kind)) for names, kind in columns),
                key=operator.itemgetter(0),
            )
        )
        return list(map(operator.itemgetter(0), merged)), list(map(operator.itemgetter(1), merged))

    def iter_objects(
        self, namespace: str, start_after: str | None = None, page_size: int = PAGE_SIZE
    ) -> Iterator[ObjectRef]:
        """Tables and views of a namespace after `start_after`, ordered by name, read a
        page at a time (memory bounded by the page size, not the namespace size)."""
        return (
            ObjectRef(namespace, name, kind)
            for name, kind in self.iter_object_names(namespace, start_after, page_size)
        )

    def list_objects(self, namespace: str) -> list[ObjectRef]:
        """Tables and views of a namespace, ordered by name."""
        return list(self.iter_objects(namespace))

    def iter_all(self) -> Iterator[tuple[ObjectRef, str]]:
        """Every namespace, table and view with its definition location, in key order."""
        for kind in ("namespace", *OBJECT_KINDS):
            prefix = self.keys.kind_prefix(kind)
            after = None
            while True:
                page = self._view.scan_prefix(prefix, after, PAGE_SIZE)
                yield from self._refs(kind, page)
                if len(page) < PAGE_SIZE:
                    break
                after = page[-1][0]

    def _refs(self, kind: Kind, page: list[tuple[str, str]]) -> Iterator[tuple[ObjectRef, str]]:
        """(ref, location) of a page of keys of `kind`: the keys decoded in bulk
        (`KeyCodec.bulk_decode`), or one at a time (`KeyCodec.decode`, with
        its precise error, after the pairs before the bad key) when one is not plain."""
        columns = self.keys.bulk_decode(kind, list(map(_first, page)))
        if columns is not None:
            refs = map(ObjectRef, *columns, itertools.repeat(kind))
            yield from zip(refs, map(_second, page), strict=True)
            return
        for key, location in page:
            ok = self.keys.decode(key)
            yield ObjectRef(ok.namespace, ok.name, ok.kind), location  # type: ignore[arg-type]

    def read_definition(self, ref: ObjectRef, location: str) -> Message:
        """The definition of `ref` at `location`: a (ref, location) pair a listing gave."""
        if not isinstance(ref, ObjectRef) or not isinstance(location, str):
            raise InvalidArgumentError(
                "read_definition takes a (ref, location) pair from iter_definitions or "
                f"object_refs, not ({type(ref).__name__}, {type(location).__name__})"
            )
        return self._decode_of(ref.kind, ref.namespace, ref.name, location)
