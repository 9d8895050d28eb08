"""Namespaces (and the absence of Iceberg views) of `TrinityCatalog`.

An Iceberg namespace is a TrinityLake namespace: one level, its properties the
NamespaceDef properties; the `location` property is where new tables go, so it must lie
in the allowed locations. TrinityLake views are ViewDefs, not Iceberg views: the Iceberg
view API lists none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from pyiceberg.catalog import Catalog, PropertiesUpdateSummary
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchViewError
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from trinityfs.catalog import CatalogTransaction
from trinityfs.errors import InvalidArgumentError
from trinityfs.iceberg.errors import iceberg_errors

if TYPE_CHECKING:
    from pyiceberg.view import View

    from trinityfs.catalog import CatalogSnapshot

T = TypeVar("T")

LOCATION = "location"  # the namespace property PyIceberg puts new tables under


class NamespaceMixin:
    """The namespace and view methods of TrinityCatalog (see trinityfs/iceberg/catalog.py
    for _write, _view, _namespace_name, _table_ref and check_location)."""

    if TYPE_CHECKING:  # provided by TrinityCatalog (and PyIceberg's Catalog)

        def _write(
            self, change: Callable[[CatalogTransaction], T], what: str, **subject: str | bool
        ) -> T: ...
        def _view(self) -> CatalogSnapshot | CatalogTransaction: ...
        def _namespace_name(self, namespace: str | Identifier) -> str: ...
        def _table_ref(self, identifier: str | Identifier) -> tuple[str, str]: ...
        def check_location(self, location: str, what: str) -> str: ...
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

    def _check_namespace_location(self, ns: str, props: dict[str, str]) -> None:
        """A namespace `location` is where its new tables go: it must be allowed."""
        if props.get(LOCATION):
            self.check_location(props[LOCATION], f"namespace {ns}: property {LOCATION!r}")

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ns = self._namespace_name(namespace)

        def change(txn: CatalogTransaction) -> None:
            txn.drop_namespace(ns)

        self._write(change, f"dropping namespace {ns}", namespace=ns)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ns = self._namespace_name(namespace)
        with iceberg_errors(f"listing namespace {ns}", namespace=ns, must_exist=True):
            return [(ns, name) for name in self._view().iter_names("table", ns)]

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
