"""Iceberg schemas mirrored into TrinityLake `TableDef` schemas (and back).

Every `TableDef` the catalog writes carries the current Iceberg schema of its table, so
that readers of the catalog alone (the CLI, the filesystem view, Spark's catalog scan)
see columns and types without opening any Iceberg file. Column ids are the Iceberg field
ids; `nullable` is the opposite of Iceberg's `required`.

| Iceberg type          | TrinityLake DataType | Column properties                |
|-----------------------|----------------------|----------------------------------|
| boolean               | BOOLEAN              |                                  |
| int                   | INT4                 |                                  |
| long                  | INT8                 |                                  |
| float                 | FLOAT4               |                                  |
| double                | FLOAT8               |                                  |
| decimal(P, S)         | DECIMAL              | precision=P, scale=S             |
| date                  | DATE                 |                                  |
| time                  | TIME6                |                                  |
| timestamp             | TIMESTAMP6           |                                  |
| timestamptz           | TIMESTAMPTZ6         |                                  |
| timestamp_ns          | TIMESTAMP9           |                                  |
| timestamptz_ns        | TIMESTAMPTZ9         |                                  |
| string                | VARCHAR              |                                  |
| uuid                  | FIXED                | length=16                        |
| fixed[L]              | FIXED                | length=L                         |
| binary                | BINARY               |                                  |
| unknown, geometry,    | BINARY               | (exact type in iceberg.type)     |
| geography             |                      |                                  |
| struct<...>           | STRUCT               | struct_fields                    |
| list<E>               | LIST                 | list_element (id = element id)   |
| map<K, V>             | MAP                  | map_key, map_value (ids = key/value ids) |

Every column also has the property `iceberg.type` with the exact Iceberg type string
(`decimal(10, 2)`, `uuid`, `timestamptz`, `struct`, ...), so the mapping is lossless,
and `doc` when the field has a doc string.
"""

from __future__ import annotations

from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from trinityfs.catalog.definitions import Column, DataType, Schema

ICEBERG_TYPE = "iceberg.type"

_PRIMITIVES: dict[type, int] = {
    BooleanType: DataType.BOOLEAN,
    IntegerType: DataType.INT4,
    LongType: DataType.INT8,
    FloatType: DataType.FLOAT4,
    DoubleType: DataType.FLOAT8,
    DecimalType: DataType.DECIMAL,
    DateType: DataType.DATE,
    TimeType: DataType.TIME6,
    TimestampType: DataType.TIMESTAMP6,
    TimestamptzType: DataType.TIMESTAMPTZ6,
    TimestampNanoType: DataType.TIMESTAMP9,
    TimestamptzNanoType: DataType.TIMESTAMPTZ9,
    StringType: DataType.VARCHAR,
    UUIDType: DataType.FIXED,
    FixedType: DataType.FIXED,
    BinaryType: DataType.BINARY,
}

_FROM_DATATYPE: dict[int, IcebergType] = {
    DataType.BOOLEAN: BooleanType(),
    DataType.INT2: IntegerType(),
    DataType.INT4: IntegerType(),
    DataType.INT8: LongType(),
    DataType.FLOAT4: FloatType(),
    DataType.FLOAT8: DoubleType(),
    DataType.DATE: DateType(),
    DataType.TIME3: TimeType(),
    DataType.TIME6: TimeType(),
    DataType.TIME9: TimeType(),
    DataType.TIMESTAMP3: TimestampType(),
    DataType.TIMESTAMP6: TimestampType(),
    DataType.TIMESTAMP9: TimestampNanoType(),
    DataType.TIMESTAMPTZ3: TimestamptzType(),
    DataType.TIMESTAMPTZ6: TimestamptzType(),
    DataType.TIMESTAMPTZ9: TimestamptzNanoType(),
    DataType.CHAR: StringType(),
    DataType.VARCHAR: StringType(),
    DataType.BINARY: BinaryType(),
}


def _column(
    field_id: int, name: str, ftype: IcebergType, required: bool, doc: str | None
) -> Column:
    col = Column(id=field_id, name=name, nullable=not required)
    col.properties[ICEBERG_TYPE] = _type_name(ftype)
    if doc:
        col.properties["doc"] = doc
    if isinstance(ftype, StructType):
        col.type = DataType.STRUCT
        col.struct_fields.extend(_field_column(f) for f in ftype.fields)
    elif isinstance(ftype, ListType):
        col.type = DataType.LIST
        col.list_element.CopyFrom(
            _column(ftype.element_id, "element", ftype.element_type, ftype.element_required, None)
        )
    elif isinstance(ftype, MapType):
        col.type = DataType.MAP
        col.map_key.CopyFrom(_column(ftype.key_id, "key", ftype.key_type, True, None))
        col.map_value.CopyFrom(
            _column(ftype.value_id, "value", ftype.value_type, ftype.value_required, None)
        )
    else:
        col.type = _PRIMITIVES.get(type(ftype), DataType.BINARY)
        if isinstance(ftype, DecimalType):
            col.properties["precision"] = str(ftype.precision)
            col.properties["scale"] = str(ftype.scale)
        elif isinstance(ftype, FixedType):
            col.properties["length"] = str(len(ftype))
        elif isinstance(ftype, UUIDType):
            col.properties["length"] = "16"
    return col


def _type_name(ftype: IcebergType) -> str:
    if isinstance(ftype, StructType):
        return "struct"
    if isinstance(ftype, ListType):
        return "list"
    if isinstance(ftype, MapType):
        return "map"
    return str(ftype)


def _field_column(field: NestedField) -> Column:
    return _column(field.field_id, field.name, field.field_type, field.required, field.doc)


def to_tabledef_schema(schema: IcebergSchema) -> Schema:
    """The TrinityLake `Schema` message mirroring an Iceberg schema."""
    return Schema(columns=[_field_column(f) for f in schema.fields])


def _iceberg_type(col: Column) -> IcebergType:
    if col.type == DataType.STRUCT:
        return StructType(*(_nested_field(c) for c in col.struct_fields))
    if col.type == DataType.LIST:
        el = col.list_element
        return ListType(el.id, _iceberg_type(el), element_required=not el.nullable)
    if col.type == DataType.MAP:
        key, value = col.map_key, col.map_value
        return MapType(
            key.id, _iceberg_type(key), value.id, _iceberg_type(value), not value.nullable
        )
    name = col.properties.get(ICEBERG_TYPE)
    if name is not None:
        from pyiceberg.types import PrimitiveType

        try:
            return PrimitiveType.model_validate(name)  # the exact type, as written
        except Exception:
            pass
    if col.type == DataType.DECIMAL:
        return DecimalType(int(col.properties["precision"]), int(col.properties["scale"]))
    if col.type == DataType.FIXED:
        return FixedType(int(col.properties.get("length", "16")))
    if col.type in _FROM_DATATYPE:
        return _FROM_DATATYPE[col.type]
    raise ValueError(f"column {col.name!r}: no Iceberg type for {DataType.Name(col.type)}")


def _nested_field(col: Column) -> NestedField:
    return NestedField(
        field_id=col.id,
        name=col.name,
        field_type=_iceberg_type(col),
        required=not col.nullable,
        doc=col.properties.get("doc"),
    )


def from_tabledef_schema(schema: Schema) -> IcebergSchema:
    """The Iceberg schema a TrinityLake `Schema` message describes (the inverse mapping)."""
    return IcebergSchema(*(_nested_field(c) for c in schema.columns))


__all__ = ["ICEBERG_TYPE", "from_tabledef_schema", "to_tabledef_schema"]
