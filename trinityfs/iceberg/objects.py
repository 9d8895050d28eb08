"""Which TrinityLake tables and views are Iceberg ones: the one rule of every Iceberg
front end (TrinityCatalog, the REST server, Spark and DuckDB through them).

A TrinityLake table is an Iceberg table when its definition says table_format ICEBERG
and names a metadata_location (`pointer.is_iceberg`); a view is an Iceberg view when its
properties do (`pointer.view_metadata_location_of`). Any other table or view holds its
name (an Iceberg create over it is refused) but is no Iceberg object: it is not listed,
not loaded, not found by exists, not dropped or renamed (NoSuchTableError /
NoSuchViewError; REST 404), and nothing changes.

Listing reads the definition of every listed name (one definition file each) to apply
the rule; a definition that cannot be read fails the listing, as loading it would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from pyiceberg.exceptions import NoSuchTableError, NoSuchViewError

from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.pointer import metadata_location_of, view_metadata_location_of

if TYPE_CHECKING:
    from trinityfs.catalog import CatalogSnapshot, CatalogTransaction
    from trinityfs.catalog.definitions import TableDef

    View = CatalogSnapshot | CatalogTransaction

Kind = Literal["table", "view"]


def iceberg_table(view: View, ns: str, name: str) -> TableDef:
    """The definition of Iceberg table `ns.name` in `view`; NoSuchTableError when there is
    none (or no such namespace) or the table is of another format."""
    ident = f"{ns}.{name}"
    with iceberg_errors(f"table {ident}", table=ident, namespace=ns, must_exist=True):
        tdef = view.describe_table(ns, name)
    metadata_location_of(ident, tdef)  # NoSuchIcebergTableError, a NoSuchTableError
    return tdef


def table_location(view: View, ns: str, name: str) -> str:
    """The metadata location of Iceberg table `ns.name` (see `iceberg_table`)."""
    return metadata_location_of(f"{ns}.{name}", iceberg_table(view, ns, name))


def view_location(view: View, ns: str, name: str) -> str:
    """The metadata location of Iceberg view `ns.name`; NoSuchViewError when there is
    none (or no such namespace) or the view is no Iceberg view."""
    ident = f"{ns}.{name}"
    with iceberg_errors(f"view {ident}", table=ident, namespace=ns, must_exist=True, kind="view"):
        vdef = view.describe_view(ns, name)
    return view_metadata_location_of(ident, vdef.properties)


def is_iceberg_object(view: View, kind: Kind, ns: str, name: str) -> bool:
    """Whether `ns.name` is an Iceberg table (kind "table") or view (kind "view")."""
    try:
        if kind == "table":
            iceberg_table(view, ns, name)
        else:
            view_location(view, ns, name)
    except (NoSuchTableError, NoSuchViewError):
        return False
    return True


def iceberg_names(view: View, kind: Kind, ns: str, start_after: str | None = None) -> Iterator[str]:
    """The names of the Iceberg tables or views of namespace `ns` after `start_after`, in
    order (the names of every other table or view skipped). A missing namespace raises
    the catalog's NotFoundError on the first step."""
    for name in view.iter_names(kind, ns, start_after):
        if is_iceberg_object(view, kind, ns, name):
            yield name


def iceberg_page(view: View, kind: Kind, ns: str, start_after: str | None, limit: int) -> list[str]:
    """At most `limit` names of `iceberg_names`."""
    out: list[str] = []
    if limit <= 0:
        return out
    for name in iceberg_names(view, kind, ns, start_after):
        out.append(name)
        if len(out) >= limit:
            break
    return out


__all__ = [
    "iceberg_names",
    "iceberg_page",
    "iceberg_table",
    "is_iceberg_object",
    "table_location",
    "view_location",
]
