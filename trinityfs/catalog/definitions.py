"""The definition messages front ends build and read (tables, views, namespaces, and the
column types of a table schema), exported by the catalog API so that no front end
imports the format layer's generated protobuf module."""

from trinityfs.format.trinitylake_pb2 import (
    Column,
    DataType,
    LakehouseDef,
    NamespaceDef,
    Schema,
    TableDef,
    ViewDef,
)

__all__ = [
    "Column",
    "DataType",
    "LakehouseDef",
    "NamespaceDef",
    "Schema",
    "TableDef",
    "ViewDef",
]
