"""Spark <-> Iceberg <-> Arrow type conversions for the `trinitylake` data source.

Reading (Iceberg -> Spark): boolean, int, long, float, double, decimal, date, string,
binary map to the same Spark types; time -> TimeType(6) (Spark >= 4.1; microseconds
since midnight as LongType on 4.0); timestamp -> TimestampNTZType;
timestamptz -> TimestampType; timestamp_ns / timestamptz_ns -> the same, truncated to
microseconds; uuid -> StringType (canonical text form); fixed -> BinaryType;
struct/list/map -> StructType/ArrayType/MapType. Iceberg `required` becomes
`nullable=False`.

Writing (Spark -> Iceberg, when the data source creates a table): ByteType and
ShortType widen to int, CharType/VarcharType/StringType -> string, NullType -> string
(all null), TimestampType (an instant in Spark's session time zone) -> timestamptz,
TimestampNTZType -> timestamp, TimeType -> time, nested types recursively. Every column
of a table created from a DataFrame is optional: Spark's nullability flags depend on
how a DataFrame was built (a literal is non-null, the same column read back is
nullable), so declaring them required would make valid DataFrames fail to write later.
When writing into an existing table, batches are cast to the table's Arrow schema
(session time zone -> UTC, narrower integers widened); a null in a required column is
the only nullability error, and names the column.
"""

from __future__ import annotations

import uuid as uuid_mod

import pyarrow as pa
import pyarrow.compute as pc
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
from pyspark.sql import types as T

_SPARK_TIME = getattr(T, "TimeType", None)  # Spark >= 4.1


class UnsupportedTypeError(ValueError):
    """A Spark or Iceberg type the data source cannot convert; names the column."""


# -- Iceberg -> Spark --------------------------------------------------------------


def spark_type(ftype: IcebergType, path: str = "") -> T.DataType:
    if isinstance(ftype, StructType):
        return T.StructType(
            [
                T.StructField(f.name, spark_type(f.field_type, f"{path}.{f.name}"), not f.required)
                for f in ftype.fields
            ]
        )
    if isinstance(ftype, ListType):
        return T.ArrayType(spark_type(ftype.element_type, path), not ftype.element_required)
    if isinstance(ftype, MapType):
        return T.MapType(
            spark_type(ftype.key_type, path),
            spark_type(ftype.value_type, path),
            not ftype.value_required,
        )
    simple = {
        BooleanType: T.BooleanType(),
        IntegerType: T.IntegerType(),
        LongType: T.LongType(),
        FloatType: T.FloatType(),
        DoubleType: T.DoubleType(),
        DateType: T.DateType(),
        StringType: T.StringType(),
        BinaryType: T.BinaryType(),
        FixedType: T.BinaryType(),
        UUIDType: T.StringType(),
        TimestampType: T.TimestampNTZType(),
        TimestampNanoType: T.TimestampNTZType(),
        TimestamptzType: T.TimestampType(),
        TimestamptzNanoType: T.TimestampType(),
    }
    if isinstance(ftype, TimeType):
        if _SPARK_TIME is None:  # PySpark 4.0 has no TIME type
            return T.LongType()
        return _SPARK_TIME(6)
    for cls, st in simple.items():
        if isinstance(ftype, cls):
            return st
    if isinstance(ftype, DecimalType):
        return T.DecimalType(ftype.precision, ftype.scale)
    raise UnsupportedTypeError(
        f"column {path.lstrip('.')!r}: Iceberg type {ftype} has no Spark type"
    )


def spark_schema(schema: IcebergSchema) -> T.StructType:
    """The Spark schema of an Iceberg schema (or of a projection of it)."""
    return T.StructType(
        [
            T.StructField(f.name, spark_type(f.field_type, f.name), not f.required)
            for f in schema.fields
        ]
    )


# -- Spark -> Iceberg --------------------------------------------------------------


class _Ids:
    def __init__(self) -> None:
        self.next = 0

    def __call__(self) -> int:
        self.next += 1
        return self.next


def _iceberg_type(dt: T.DataType, path: str, ids: _Ids) -> IcebergType:
    if isinstance(dt, T.StructType):
        fields = []
        for f in dt.fields:
            fid = ids()
            fields.append(
                NestedField(
                    fid, f.name, _iceberg_type(f.dataType, f"{path}.{f.name}", ids), required=False
                )
            )
        return StructType(*fields)
    if isinstance(dt, T.ArrayType):
        eid = ids()
        return ListType(eid, _iceberg_type(dt.elementType, path, ids), element_required=False)
    if isinstance(dt, T.MapType):
        kid, vid = ids(), ids()
        return MapType(
            kid,
            _iceberg_type(dt.keyType, path, ids),
            vid,
            _iceberg_type(dt.valueType, path, ids),
            value_required=False,
        )
    if isinstance(dt, T.BooleanType):
        return BooleanType()
    if isinstance(dt, T.ByteType | T.ShortType | T.IntegerType):
        return IntegerType()
    if isinstance(dt, T.LongType):
        return LongType()
    if isinstance(dt, T.FloatType):
        return FloatType()
    if isinstance(dt, T.DoubleType):
        return DoubleType()
    if isinstance(dt, T.DecimalType):
        return DecimalType(dt.precision, dt.scale)
    if isinstance(dt, T.StringType | T.CharType | T.VarcharType | T.NullType):
        return StringType()
    if isinstance(dt, T.BinaryType):
        return BinaryType()
    if isinstance(dt, T.DateType):
        return DateType()
    if isinstance(dt, T.TimestampNTZType):
        return TimestampType()
    if isinstance(dt, T.TimestampType):
        return TimestamptzType()
    if _SPARK_TIME is not None and isinstance(dt, _SPARK_TIME):
        return TimeType()
    raise UnsupportedTypeError(
        f"column {path.lstrip('.')!r}: Spark type {dt.simpleString()} cannot be stored in an "
        "Iceberg table (cast it first, e.g. intervals to strings or longs)"
    )


def iceberg_schema_from_spark(schema: T.StructType) -> IcebergSchema:
    """An Iceberg schema for a DataFrame's schema (every column optional; see module doc)."""
    ids = _Ids()
    fields = []
    for f in schema.fields:
        fid = ids()
        fields.append(
            NestedField(fid, f.name, _iceberg_type(f.dataType, f.name, ids), required=False)
        )
    return IcebergSchema(*fields)


# -- Arrow conversions --------------------------------------------------------------


def _uuid_to_text(arr: pa.Array) -> pa.Array:
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    values = [None if b is None else str(uuid_mod.UUID(bytes=b)) for b in arr.to_pylist()]
    return pa.array(values, pa.string())


def _text_to_uuid(arr: pa.Array, target: pa.DataType) -> pa.Array:
    values = [None if s is None else uuid_mod.UUID(s).bytes for s in arr.to_pylist()]
    storage = pa.array(values, pa.binary(16))
    if isinstance(target, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(target, storage)
    return storage.cast(target)


def _convert(arr: pa.Array, target: pa.DataType, name: str, safe: bool = False) -> pa.Array:
    """Cast `arr` to `target`, recursing through nested types (names are matched)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    src = arr.type
    if src == target:
        return arr
    if isinstance(target, pa.ExtensionType) or isinstance(src, pa.ExtensionType):
        if pa.types.is_string(src) or pa.types.is_large_string(src):
            return _text_to_uuid(arr, target)
        if pa.types.is_string(target) or pa.types.is_large_string(target):
            return _uuid_to_text(arr).cast(target)
        if isinstance(src, pa.ExtensionType):
            return _convert(arr.storage, target, name, safe)
        storage = _convert(arr, target.storage_type, name, safe)
        return pa.ExtensionArray.from_storage(target, storage)
    if pa.types.is_fixed_size_binary(src) and src.byte_width == 16 and pa.types.is_string(target):
        return _uuid_to_text(arr)
    if pa.types.is_fixed_size_binary(target) and (
        pa.types.is_string(src) or pa.types.is_large_string(src)
    ):
        return _text_to_uuid(arr, target)
    if pa.types.is_struct(target) and pa.types.is_struct(src):
        children = []
        for i in range(target.num_fields):
            tf = target.field(i)
            idx = src.get_field_index(tf.name)
            if idx < 0:
                child = pa.nulls(len(arr), tf.type)
            else:
                child = _convert(arr.field(idx), tf.type, f"{name}.{tf.name}", safe)
            children.append(child)
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if _is_list(target) and _is_list(src):
        values = _convert(arr.flatten(), target.value_type, f"{name}[]", safe)
        offsets = _zero_based(arr.offsets)
        mask = arr.is_null() if arr.null_count else None
        cls = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
        out = cls.from_arrays(_offsets_for(offsets, target), values, mask=mask)
        return out.cast(target) if out.type != target else out
    if pa.types.is_map(target) and pa.types.is_map(src):
        if arr.offset:
            arr = pa.concat_arrays([arr.slice(0, 0).cast(src), arr])  # unslice
        keys = _convert(arr.keys, target.key_type, f"{name}.key", safe)
        items = _convert(arr.items, target.item_type, f"{name}.value", safe)
        mask = arr.is_null() if arr.null_count else None
        out = pa.MapArray.from_arrays(_zero_based(arr.offsets), keys, items, mask=mask)
        return out.cast(target) if out.type != target else out
    if pa.types.is_null(src):
        return pa.nulls(len(arr), target)
    try:
        return pc.cast(arr, target, safe=safe)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise UnsupportedTypeError(
            f"column {name!r}: cannot convert {src} to {target}: {exc}"
        ) from None


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def _zero_based(offsets: pa.Array) -> pa.Array:
    first = offsets[0].as_py() if len(offsets) else 0
    return pc.subtract(offsets, first) if first else offsets


def _offsets_for(offsets: pa.Array, target: pa.DataType) -> pa.Array:
    want = pa.int64() if pa.types.is_large_list(target) else pa.int32()
    return offsets if offsets.type == want else offsets.cast(want)


def conform(
    batch: pa.RecordBatch, schema: pa.Schema, *, check_nulls: bool, safe: bool = False
) -> pa.RecordBatch:
    """`batch` with exactly `schema` (names matched, nested included).

    With check_nulls, a null in a non-nullable field (top level) raises ValueError naming
    the column; otherwise non-nullable only relabels the field.
    """
    names = batch.schema.names
    columns = []
    for field in schema:
        if field.name in names:
            col = _convert(batch.column(names.index(field.name)), field.type, field.name, safe)
        else:
            col = pa.nulls(batch.num_rows, field.type)
        if check_nulls and not field.nullable and col.null_count:
            raise ValueError(
                f"column {field.name!r} is required in the table but the data has "
                f"{col.null_count} null(s)"
            )
        columns.append(col)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def to_spark_arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema Spark's Python data source expects batches in."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def normalize_spark_batch(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """A batch from Spark (session time zone, narrow ints, Spark nullability) in the
    table's Arrow schema (UTC, Iceberg types; required fields checked for nulls)."""
    return conform(batch, target, check_nulls=True, safe=True)


__all__ = [
    "UnsupportedTypeError",
    "conform",
    "iceberg_schema_from_spark",
    "normalize_spark_batch",
    "spark_schema",
    "spark_type",
    "to_spark_arrow_schema",
]
