"""The TrinityLake definition of an Iceberg table: a `TableDef` pointing at its metadata.

An Iceberg table is a TableDef with table_format ICEBERG, format_properties
`metadata_location` (and `previous_metadata_location`), and a schema mirroring the current
Iceberg schema (trinityfs/iceberg/schema.py); primary_keys are the identifier field ids,
distribution_keys the source columns of the default partition spec, sort_keys the source
columns of the default sort order.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyiceberg.exceptions import NoSuchIcebergTableError, NoSuchViewError
from pyiceberg.table.metadata import TableMetadata

from trinityfs.catalog.definitions import TableDef
from trinityfs.iceberg.schema import to_tabledef_schema

ICEBERG = "ICEBERG"
TABLE_FORMAT = "table_format"  # the ViewDef property naming an Iceberg view's format
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
MANAGED = "MANAGED"
EXTERNAL = "EXTERNAL"


def is_iceberg(tdef: TableDef) -> bool:
    """Whether a TableDef is an Iceberg table's: format ICEBERG and a metadata location
    (the one rule of the Iceberg front ends: load, exists, rename, register, REST)."""
    return tdef.table_format.upper() == ICEBERG and bool(
        tdef.format_properties.get(METADATA_LOCATION)
    )


def metadata_location_of(ident: str, tdef: TableDef) -> str:
    """Where the Iceberg metadata of table `ident` is; NoSuchIcebergTableError when the
    definition is not an Iceberg table's."""
    location = tdef.format_properties.get(METADATA_LOCATION)
    if not is_iceberg(tdef):
        raise NoSuchIcebergTableError(
            f"{ident} is not an Iceberg table (table_format "
            f"{tdef.table_format or '(none)'!r}, no {METADATA_LOCATION})"
        )
    return location


def view_metadata_location_of(ident: str, properties: Mapping[str, str]) -> str:
    """Where the Iceberg view metadata of view `ident` (its ViewDef properties) is;
    NoSuchViewError when the view is a TrinityLake view but not an Iceberg view (the
    one rule of the Iceberg front ends: TrinityCatalog and REST)."""
    location = properties.get(METADATA_LOCATION)
    if properties.get(TABLE_FORMAT, "").upper() != ICEBERG or not location:
        raise NoSuchViewError(
            f"View does not exist: {ident} is a TrinityLake view but not an Iceberg view"
        )
    return location


def view_definition(metadata_location: str) -> dict[str, dict[str, str]]:
    """The ViewDef (as a dict) of an Iceberg view whose metadata is at the location."""
    return {"properties": {TABLE_FORMAT: ICEBERG, METADATA_LOCATION: metadata_location}}


def table_def(
    metadata: TableMetadata,
    metadata_location: str,
    old: TableDef | None,
    table_type: str = MANAGED,
) -> TableDef:
    """The definition pointing at `metadata_location`, keeping what `old` had (its id,
    type and properties) and recording `old`'s pointer as the previous one."""
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


__all__ = [
    "EXTERNAL",
    "ICEBERG",
    "MANAGED",
    "METADATA_LOCATION",
    "PREVIOUS_METADATA_LOCATION",
    "is_iceberg",
    "metadata_location_of",
    "table_def",
    "view_definition",
    "view_metadata_location_of",
]
