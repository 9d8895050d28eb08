"""Namespaces and views of `TrinityCatalog`.

An Iceberg namespace is a TrinityLake namespace: one level, its properties the
NamespaceDef properties; the `location` property is where new tables go, so it must lie
in the allowed locations. An Iceberg view is a TrinityLake view whose properties point
at Iceberg view metadata (trinityfs/iceberg/pointer.py; the REST server creates and
replaces them): the view API lists, loads, finds and drops only those, as the REST
server does (trinityfs/iceberg/objects.py). Creating and replacing views is the REST server's only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from pyiceberg.catalog import Catalog, PropertiesUpdateSummary
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchViewError
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from trinityfs import errors as tfs
from trinityfs.catalog import CatalogTransaction
from trinityfs.errors import InvalidArgumentError, StorageFileNotFoundError
from trinityfs.iceberg.errors import iceberg_errors, not_empty_names
from trinityfs.iceberg.objects import (
    iceberg_names,
    is_iceberg_object,
    read_threads,
    view_location,
)

if TYPE_CHECKING:
    from pyiceberg.io import FileIO
    from pyiceberg.view import View

    from trinityfs.catalog import CatalogSnapshot, Lakehouse

T = TypeVar("T")

LOCATION = "location"  # the namespace property PyIceberg puts new tables under
SHOWN = 3  # objects named in the message of a namespace drop refused as not empty


class NamespaceMixin:
    """The namespace and view methods of TrinityCatalog (see trinityfs/iceberg/catalog.py
    for _write, _view, _namespace_name, _table_ref and check_location)."""

    if TYPE_CHECKING:  # provided by TrinityCatalog (and PyIceberg's Catalog)

        def _write(
            self, change: Callable[[CatalogTransaction], T], what: str, **subject: str | bool
        ) -> T: ...

        _lake: Lakehouse

        def _view(self) -> CatalogSnapshot | CatalogTransaction: ...
        def _namespace_name(self, namespace: str | Identifier) -> str: ...
        def _table_ref(self, identifier: str | Identifier) -> tuple[str, str]: ...
        def check_location(self, location: str, what: str) -> str: ...
        def _load_file_io(
            self, properties: Properties = EMPTY_DICT, location: str | None = None
        ) -> FileIO: ...
        def _get_updated_props_and_update_summary(
            self, current_properties: Properties, removals: set[str] | None, updates: Properties
        ) -> tuple[PropertiesUpdateSummary, Properties]: ...

    def create_namespace(
        self, namespace: str | Identifier, properties: Properties = EMPTY_DICT
    ) -> None:
        ns = self._namespace_name(namespace)
        props = _string_properties(properties)
        self._check_namespace_location(ns, props)

        def change(txn: CatalogTransaction) -> None:
            txn.create_namespace(ns, props)

        self._write(change, f"creating namespace {ns}", namespace=ns)

    @property
    def _read_threads(self) -> int:
        """Definitions a listing reads at once (objects.read_threads)."""
        return read_threads(self._lake.url)

    def _check_namespace_location(self, ns: str, props: dict[str, str]) -> None:
        """A namespace `location` is where its new tables go: it must be allowed."""
        if props.get(LOCATION):
            self.check_location(props[LOCATION], f"namespace {ns}: property {LOCATION!r}")

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_name(namespace)

        def change(txn: CatalogTransaction) -> None:
            with not_empty_names(ns, lambda: _contents(txn, ns)):
                txn.drop_namespace(ns)

        self._write(change, f"dropping namespace {ns}", namespace=ns)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_name(namespace)
        with iceberg_errors(f"listing namespace {ns}", namespace=ns, must_exist=True):
            names = iceberg_names(self._view(), "table", ns, threads=self._read_threads)
            return [(ns, name) for name in names]

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        if namespace and Catalog.identifier_to_tuple(namespace) != ():
            ns = self._namespace_name(namespace)
            if not self.namespace_exists((ns,)):
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
            with iceberg_errors(f"namespace {ns}", namespace=ns, must_exist=True):
                return self._view().namespace_exists(ns)
        except NoSuchNamespaceError:
            return False

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        ns = self._namespace_name(namespace)
        with iceberg_errors(f"loading namespace {ns}", namespace=ns, must_exist=True):
            return dict(self._view().describe_namespace(ns).properties)

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
            current = dict(txn.describe_namespace(ns).properties)
            summary, _ = self._get_updated_props_and_update_summary(current, removals, new_props)
            txn.set_namespace_properties(ns, new_props, list(removals or ()))
            return summary

        return self._write(change, f"updating namespace {ns}", namespace=ns, must_exist=True)

    # -- views: Iceberg views are TrinityLake views pointing at Iceberg view metadata --

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        """The Iceberg views of the namespace (trinityfs/iceberg/objects.py: other
        TrinityLake views are not listed, as the REST server lists them)."""
        ns = self._namespace_name(namespace)
        with iceberg_errors(f"listing namespace {ns}", namespace=ns, must_exist=True):
            names = iceberg_names(self._view(), "view", ns, threads=self._read_threads)
            return [(ns, name) for name in names]

    def _view_location(self, ns: str, name: str) -> str:
        return view_location(self._view(), ns, name)

    def view_exists(self, identifier: str | Identifier) -> bool:
        """True when `load_view` finds an Iceberg view (the REST server's HEAD)."""
        ns, name = self._table_ref(identifier)
        try:
            self._view_location(ns, name)
        except NoSuchViewError:
            return False
        return True

    def load_view(self, identifier: str | Identifier) -> View:
        """An Iceberg view (a TrinityLake view pointing at Iceberg view metadata, as the
        REST server creates them); NoSuchViewError for any other view."""
        from pyiceberg.view import View
        from pyiceberg.view.metadata import ViewMetadata

        ns, name = self._table_ref(identifier)
        location = self.check_location(
            self._view_location(ns, name), f"view {ns}.{name}: metadata location"
        )
        try:
            with self._load_file_io(location=location).new_input(location).open() as stream:
                metadata = ViewMetadata.model_validate_json(stream.read())
        except FileNotFoundError:
            raise StorageFileNotFoundError(
                location, f"view {ns}.{name}: its Iceberg view metadata file is missing"
            ) from None
        except (OSError, ValueError) as exc:
            raise NoSuchViewError(
                f"view {ns}.{name}: {location!r} is not readable Iceberg view metadata "
                f"({type(exc).__name__})"
            ) from None
        return View((ns, name), metadata)

    def drop_view(self, identifier: str | Identifier) -> None:
        ns, name = self._table_ref(identifier)
        ident = f"{ns}.{name}"

        def change(txn: CatalogTransaction) -> None:
            view_location(txn, ns, name)  # a view that is no Iceberg view is not dropped
            with iceberg_errors(
                f"dropping view {ident}", table=ident, must_exist=True, kind="view"
            ):
                txn.drop_view(ns, name)

        self._write(change, f"dropping view {ident}", namespace=ns)

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> View:
        raise NotImplementedError("Iceberg views are not supported by the TrinityLake catalog")


def _contents(txn: CatalogTransaction, ns: str) -> str:
    """What keeps namespace `ns` from being dropped: every table and view of any format
    counted, the first few named with what they are to Iceberg clients (which list only
    the Iceberg ones)."""
    parts = []
    for kind in ("table", "view"):
        shown: list[str] = []
        count = 0
        for name in txn.iter_names(kind, ns):
            count += 1
            if len(shown) < SHOWN:
                try:
                    iceberg = is_iceberg_object(txn, kind, ns, name)
                except tfs.TrinityError:  # unreadable: named as it is listed
                    iceberg = True
                shown.append(repr(name) if iceberg else f"{name!r} (not an Iceberg {kind})")
        if count:
            more = f", {count - len(shown)} more" if count > len(shown) else ""
            parts.append(f"{count} {kind}{'s' if count != 1 else ''} ({', '.join(shown)}{more})")
    return " and ".join(parts)


def _string_properties(properties: Properties | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (properties or {}).items():
        if not isinstance(key, str) or value is None:
            raise InvalidArgumentError(
                f"namespace property {key!r}={value!r}: keys and values must be strings"
            )
        out[key] = str(value)
    return out


__all__ = ["LOCATION", "NamespaceMixin"]
