"""The write rules of the `trinitylake` source, checked on the driver before any task
runs (and per row in the executors where only the data can tell): which DataFrames fit a
table (PyIceberg's append type rules, columns), how a new table is partitioned
(`partition-by`), what an overwrite replaces (static, dynamic, `overwrite-filter`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.options import SourceOptions


def check_types(schema: StructType, metadata: Any, ident: tuple[str, str]) -> None:
    """PyIceberg's append rule: the DataFrame's types must be the table's or promote to
    them safely (int -> long, float -> double, ...); the error names the column."""
    from pyiceberg.io.pyarrow import _check_pyarrow_schema_compatible

    from trinityfs.spark.types import to_spark_arrow_schema

    # Spark's nullability flags depend on how a DataFrame was built (see types.py): nulls
    # in required columns are checked per row while writing, so compare types only
    provided = pa.schema([required(f) for f in to_spark_arrow_schema(schema)])
    try:
        _check_pyarrow_schema_compatible(
            metadata.schema(), provided, format_version=metadata.format_version
        )
    except ValueError as exc:
        table_schema = metadata.schema()
        bad = []
        for field in provided:
            try:
                _check_pyarrow_schema_compatible(
                    table_schema.select(field.name, case_sensitive=True),
                    pa.schema([field]),
                    format_version=metadata.format_version,
                )
            except ValueError:
                want = table_schema.find_field(field.name).field_type
                bad.append(f"{field.name!r} ({field.type} into {want})")
        raise InvalidArgumentError(
            f"cannot write this DataFrame into {'.'.join(ident)}: column(s) "
            f"{', '.join(bad) or '(see below)'} would need an unsafe cast (PyIceberg's "
            f"append rules: only safe promotions); cast explicitly first.\n{exc}"
        ) from None


def required(field: pa.Field) -> pa.Field:
    """`field` with it and every nested field non-nullable."""
    t = field.type
    if pa.types.is_struct(t):
        t = pa.struct([required(t.field(i)) for i in range(t.num_fields)])
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        item = required(t.value_field)
        t = pa.list_(item) if pa.types.is_list(t) else pa.large_list(item)
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field.type, required(t.item_field))
    return field.with_type(t).with_nullable(False)


def identity_columns(metadata: Any) -> list[str]:
    from pyiceberg.transforms import IdentityTransform

    spec, schema = metadata.spec(), metadata.schema()
    if not all(isinstance(f.transform, IdentityTransform) for f in spec.fields):
        return [f"{f.transform}({schema.find_field(f.source_id).name})" for f in spec.fields]
    return [schema.find_field(f.source_id).name for f in spec.fields]


def identity_spec(schema: Any, columns: list[str]) -> Any:
    """An identity partition spec on `columns` (partitionBy of a new table)."""
    from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    if not columns:
        return UNPARTITIONED_PARTITION_SPEC
    fields = []
    for i, name in enumerate(columns):
        source = schema.find_field(name, True) if name in schema.column_names else None
        if source is None:
            raise InvalidArgumentError(
                f"partitionBy column {name!r} is not in the DataFrame ({schema.column_names})"
            )
        if not source.field_type.is_primitive:
            raise InvalidArgumentError(f"partitionBy column {name!r} is not a primitive type")
        fields.append(
            PartitionField(
                source_id=source.field_id,
                field_id=1000 + i,
                transform=IdentityTransform(),
                name=name,
            )
        )
    return PartitionSpec(*fields)


def overwrite_mode(opts: SourceOptions, metadata: Any, ident: tuple[str, str], new: bool) -> str:
    if opts.overwrite_filter:
        return "filter"
    partitioned = not metadata.spec().is_unpartitioned()
    if opts.overwrite_mode == "dynamic" and partitioned:
        if identity_columns(metadata) != [
            metadata.schema().find_field(f.source_id).name for f in metadata.spec().fields
        ]:
            raise InvalidArgumentError(
                f"partitionOverwriteMode=dynamic: {'.'.join(ident)} has non-identity partition "
                f"fields ({metadata.spec()}); use overwrite-filter to say what to replace"
            )
        return "dynamic"
    if opts.overwrite_mode is None and partitioned and not new:
        raise InvalidArgumentError(
            f"mode('overwrite') of the partitioned table {'.'.join(ident)}: say which "
            "overwrite with .option('partitionOverwriteMode', 'static') (the whole table) or "
            "'dynamic' (only the partitions written). The session setting "
            "spark.sql.sources.partitionOverwriteMode is not visible to Python data sources, "
            "so it is not guessed"
        )
    return "static"  # dynamic on an unpartitioned table replaces it, as in Spark


def bound_filter(text: str, schema: Any, option: str = "overwrite-filter") -> Any:
    """The Iceberg expression of a filter option (`filter`, `overwrite-filter`), bound to
    `schema`; a clear error naming the option when it is not a filter on its columns."""
    from pyiceberg.expressions import parser
    from pyiceberg.expressions.visitors import bind

    try:
        return bind(schema, parser.parse(text), case_sensitive=True)
    except Exception as exc:
        raise InvalidArgumentError(
            f"trinitylake option {option!r}: {text!r} is not a filter on the table's "
            f"columns ({type(exc).__name__}: {exc})"
        ) from None


def check_rows_match(batch: pa.RecordBatch, predicate: Any, text: str) -> None:
    table = pa.Table.from_batches([batch])
    outside = table.num_rows - table.filter(predicate).num_rows
    if outside:
        raise InvalidArgumentError(
            f"overwrite-filter {text!r}: {outside} written row(s) do not match it; an "
            "overwrite with a filter may only write rows the filter selects"
        )


def check_columns(schema: StructType, table_schema: Any, ident: tuple[str, str]) -> None:
    """Refuse, before any file is written, a DataFrame the table cannot hold as is."""
    names = {f.name for f in table_schema.fields}
    extra = [f.name for f in schema.fields if f.name not in names]
    if extra:
        raise InvalidArgumentError(
            f"DataFrame columns {extra} are not in table {'.'.join(ident)} (columns "
            f"{sorted(names)}): add them to the table first (PyIceberg update_schema)"
        )
    given = {f.name for f in schema.fields}
    missing = [f.name for f in table_schema.fields if f.required and f.name not in given]
    if missing:
        raise InvalidArgumentError(f"required columns {missing} of {'.'.join(ident)} are missing")


def same_layout(a: Any, b: Any) -> bool:
    """Whether data files written for metadata `b` fit a table with metadata `a`."""
    sa, sb = a.schema(), b.schema()
    return [(f.field_id, f.name, str(f.field_type)) for f in sa.fields] == [
        (f.field_id, f.name, str(f.field_type)) for f in sb.fields
    ] and a.spec().is_unpartitioned() == b.spec().is_unpartitioned()


__all__ = [
    "bound_filter",
    "check_columns",
    "check_rows_match",
    "check_types",
    "identity_columns",
    "identity_spec",
    "overwrite_mode",
    "required",
    "same_layout",
]
