"""Reading with the `trinitylake` source: a table (one Spark partition per data file) or
the catalog itself (key ranges of one catalog version).

Table reads choose a catalog version (`version` / `timestamp`) and then one Iceberg
snapshot of the table (`snapshot-id`, `as-of-timestamp`, `branch`, `tag`; the current
one by default). The `filter` option (an Iceberg row filter) is applied by PyIceberg's
planning, which prunes partitions and files by their statistics, and by the executors,
which drop non-matching rows while decoding: Spark receives only matching rows.

Spark's own filters are NOT pushed through `pushFilters`: Spark 4.3.0's JVM keeps the
read planned by one query's pushdown on the DataFrame's data source object and reuses it
for the next query on the same DataFrame that has no pushable filter (with a pushing
reader, `df.filter("id = 7 or id = 250")` after `df.filter("id < 20")` returned only 7),
so a pushing reader returns wrong rows. Apache Spark's PythonScanBuilder later scoped
that read info to one scan; until the installed Spark has it, the filter is a read
option, part of the DataFrame's definition, where it cannot leak into other queries.
tests/spark/test_spark_pushdown_canary.py reproduces it and fails once Spark is fixed.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.errors import spark_errors
from trinityfs.spark.options import SourceOptions
from trinityfs.spark.rules import bound_filter

NAME = "trinitylake"


def open_catalog(props: dict[str, str], version: str | None = None) -> Any:
    """The source's TrinityCatalog; pinned, read-only, to the catalog version `version`
    (a version selector) means by the catalog's one precedence, `Lakehouse.resolve`."""
    from trinityfs.iceberg import TrinityCatalog

    catalog = TrinityCatalog(NAME, **props)
    if version is None:
        return catalog
    with spark_errors(f"trinitylake option 'version' ({version!r})"):
        selection = catalog.lakehouse.resolve(version)
    return catalog.at(selection.version)


# -- which snapshot -----------------------------------------------------------------


@dataclass
class ResolvedRead:
    """The table, the snapshot to read (None: the table has no data) and its schema."""

    catalog: Any
    table: Any
    snapshot_id: int | None
    schema: Any  # the Iceberg schema of that snapshot (projected to `columns`)


def _where(table: Any, catalog: Any) -> str:
    return f"table {'.'.join(table.name())} at catalog version {catalog.current_version()}"


def resolve_read(opts: SourceOptions) -> ResolvedRead:
    """The snapshot the options select; InvalidArgumentError naming the option when it
    selects none."""
    assert opts.ident is not None
    catalog = open_catalog(opts.catalog, opts.version)
    with spark_errors(f"reading {'.'.join(opts.ident)}"):
        table = catalog.load_table(opts.ident)
    meta = table.metadata
    snapshot = None
    if opts.snapshot_id is not None:
        snapshot = meta.snapshot_by_id(opts.snapshot_id)
        if snapshot is None:
            known = [s.snapshot_id for s in meta.snapshots][-5:]
            raise InvalidArgumentError(
                f"trinitylake option 'snapshot-id': no snapshot {opts.snapshot_id} in "
                f"{_where(table, catalog)} (latest snapshots: {known})"
            )
    elif opts.as_of_millis is not None:
        snapshot = table.snapshot_as_of_timestamp(opts.as_of_millis)
        if snapshot is None:
            raise InvalidArgumentError(
                f"trinitylake option 'as-of-timestamp': {_where(table, catalog)} has no "
                f"snapshot at or before {opts.as_of_millis} ms"
            )
    elif opts.branch is not None or opts.tag is not None:
        kind, name = ("branch", opts.branch) if opts.branch is not None else ("tag", opts.tag)
        ref = meta.refs.get(name)
        if ref is None or str(ref.snapshot_ref_type).lower() != kind:
            refs = sorted(n for n, r in meta.refs.items() if str(r.snapshot_ref_type) == kind)
            raise InvalidArgumentError(
                f"trinitylake option {kind!r}: no {kind} {name!r} in {_where(table, catalog)} "
                f"({kind}es: {refs})"
            )
        snapshot = meta.snapshot_by_id(ref.snapshot_id)
    else:
        snapshot = table.current_snapshot()
    snapshot_id = None if snapshot is None else snapshot.snapshot_id
    schema = table.schema()
    if snapshot is not None and opts.branch is None and snapshot.schema_id is not None:
        # time travel reads the schema the snapshot was written with (Iceberg's rule;
        # a branch head reads the table's current schema)
        schema = next((s for s in meta.schemas if s.schema_id == snapshot.schema_id), schema)
    if opts.columns:
        missing = [c for c in opts.columns if schema.find_field(c, True) is None]
        if missing:
            raise InvalidArgumentError(
                f"trinitylake option 'columns': {missing} not in {_where(table, catalog)} "
                f"(columns {[f.name for f in schema.fields]})"
            )
        schema = schema.select(*opts.columns, case_sensitive=True)
    return ResolvedRead(catalog, table, snapshot_id, schema)


# -- reading a table ----------------------------------------------------------------


@dataclass(repr=False)
class FilePartition(InputPartition):
    """The data files one Spark task reads: (path, pickled PyIceberg FileScanTask) pairs."""

    index: int
    files: list[tuple[str, bytes]]

    def __repr__(self) -> str:
        return f"FilePartition({self.index}, {[path for path, _ in self.files]!r})"


OPEN_COST = 4 * 2**20  # Spark's spark.sql.files.openCostInBytes default
SPLIT_SIZE = 128 * 2**20  # Iceberg's read.split.target-size default
SPLIT_SIZE_PROPERTY = "read.split.target-size"


def default_parallelism() -> int:
    """The driver's usable CPUs: a Python data source cannot see Spark's
    defaultParallelism, and in local mode the driver's CPUs are the executors'."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def pack(sizes: list[int], split_size: int, parallelism: int) -> list[list[int]]:
    """Group files (by index, in scan order) into Spark tasks, by Spark's own rule for
    file sources (FilePartition.getFilePartitions): each file costs its size plus
    OPEN_COST, a task holds up to min(split_size, max(OPEN_COST, total cost /
    parallelism)); a bigger file is a task alone. Files keep their scan order.

    One task per small file costs a Python worker round trip each; packing them keeps
    every core busy with a few tasks instead (bench_spark.py: 8 files on 2 cores)."""
    limit = min(split_size, max(OPEN_COST, sum(s + OPEN_COST for s in sizes) // parallelism))
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        if current and used + size > limit:  # Spark checks the size alone, then adds both
            groups.append(current)
            current, used = [], 0
        current.append(i)
        used += size + OPEN_COST
    if current:
        groups.append(current)
    return groups


class TableReader(DataSourceReader):
    def __init__(self, opts: SourceOptions, schema: StructType):
        resolved = resolve_read(opts)
        table = resolved.table
        self.props = dict(resolved.catalog.properties)
        self.ident = tuple(table.name())
        self.metadata_location = table.metadata_location
        self.metadata_json = table.metadata.model_dump_json()
        self.snapshot_id = resolved.snapshot_id
        self.schema_json = resolved.schema.model_dump_json()
        self.columns = [f.name for f in schema.fields]
        self.spark_schema = schema
        known = set(resolved.schema.column_names)
        missing = [c for c in self.columns if c not in known]
        if missing:
            raise InvalidArgumentError(f"columns {missing} are not in table {'.'.join(self.ident)}")
        self.row_filter = opts.row_filter  # an Iceberg filter expression, or None
        self.split_size = opts.split_size or _split_size(table.metadata.properties)
        self.parallelism = opts.parallelism or default_parallelism()
        if self.row_filter:
            # fails now, before any task runs, when it is not a valid filter
            bound_filter(self.row_filter, resolved.schema, option="filter")

    def _schema(self) -> Any:
        from pyiceberg.schema import Schema

        return Schema.model_validate_json(self.schema_json)

    def _row_filter(self) -> Any:
        from pyiceberg.expressions import AlwaysTrue

        if not self.row_filter:
            return AlwaysTrue()
        from pyiceberg.expressions import parser

        return parser.parse(self.row_filter)  # checked (bound) when the reader was made

    def _table(self) -> Any:
        from pyiceberg.catalog.noop import NoopCatalog
        from pyiceberg.table import Table
        from pyiceberg.table.metadata import TableMetadataUtil

        from trinityfs.iceberg.io import confined_file_io

        metadata = TableMetadataUtil.parse_raw(self.metadata_json)
        io = confined_file_io({**self.props, **metadata.properties}, self.metadata_location)
        return Table(
            identifier=self.ident,
            metadata=metadata,
            metadata_location=self.metadata_location,
            io=io,
            catalog=NoopCatalog(NAME),
        )

    def plan(self) -> list[Any]:
        """PyIceberg's scan plan: the files that may hold matching rows."""
        if self.snapshot_id is None:
            return []
        scan = self._table().scan(
            row_filter=self._row_filter(),
            selected_fields=tuple(self.columns) or ("*",),
            snapshot_id=self.snapshot_id,
        )
        return list(scan.plan_files())

    def partitions(self) -> list[InputPartition]:
        tasks = self.plan()
        groups = pack([t.file.file_size_in_bytes for t in tasks], self.split_size, self.parallelism)
        return [
            FilePartition(i, [(tasks[j].file.file_path, pickle.dumps(tasks[j])) for j in group])
            for i, group in enumerate(groups)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FilePartition):
            return  # an empty table: Spark's single placeholder partition
        from pyiceberg.io.pyarrow import ArrowScan

        from trinityfs.spark.types import conform, to_spark_arrow_schema

        table = self._table()
        projected = self._schema().select(*self.columns, case_sensitive=True)
        target = to_spark_arrow_schema(self.spark_schema)
        scan = ArrowScan(
            table.metadata, table.io, projected, self._row_filter(), case_sensitive=True
        )
        for _, task in partition.files:
            for batch in scan.to_record_batches([pickle.loads(task)]):
                if batch.num_rows:
                    yield conform(batch, target, check_nulls=False)


def _split_size(properties: dict[str, str]) -> int:
    value = properties.get(SPLIT_SIZE_PROPERTY)
    if value is None:
        return SPLIT_SIZE
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise InvalidArgumentError(
            f"table property {SPLIT_SIZE_PROPERTY!r} is {value!r}, not a positive byte count "
            "(the 'split-size' read option overrides it)"
        )
    return size


# -- reading the catalog ------------------------------------------------------------

CATALOG_COLUMNS = ("kind", "namespace", "name", "version", "definition", "properties")


@dataclass
class RangePartition(InputPartition):
    """Objects with keys in (after, until] of one catalog version."""

    after: Any
    until: Any


class CatalogScanReader(DataSourceReader):
    def __init__(self, opts: SourceOptions, catalog_schema: StructType):
        self.props = opts.catalog
        self.splits = opts.splits
        self.catalog_schema = catalog_schema
        self.version = open_catalog(self.props, opts.version).current_version()

    def _snapshot(self) -> Any:
        return open_catalog(self.props).lakehouse.at(self.version)

    def partitions(self) -> list[InputPartition]:
        from trinityfs.catalog.ranges import split_points

        points = split_points(self._snapshot(), self.splits)
        bounds = [None, *points, None]
        return [RangePartition(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from google.protobuf import json_format

        from trinityfs.catalog.ranges import scan_range
        from trinityfs.spark.types import conform, to_spark_arrow_schema

        after = getattr(partition, "after", None)
        until = getattr(partition, "until", None)
        snap = self._snapshot()
        target = to_spark_arrow_schema(self.catalog_schema)

        def row(item: tuple[Any, str]) -> tuple:
            ref, location = item
            msg = snap.read_definition(ref, location)
            definition = json.dumps(
                json_format.MessageToDict(
                    msg,
                    preserving_proto_field_name=True,
                    always_print_fields_with_no_presence=True,
                ),
                sort_keys=True,
            )
            props = sorted(dict(msg.properties).items())
            return (ref.kind, ref.namespace, ref.name, self.version, definition, props)

        items = scan_range(snap, after, until)
        with ThreadPoolExecutor(max_workers=16) as pool:
            batch: list[tuple] = []
            for r in pool.map(row, items):
                batch.append(r)
                if len(batch) >= 4096:
                    yield _catalog_batch(batch, target, conform)
                    batch = []
            if batch:
                yield _catalog_batch(batch, target, conform)


def _catalog_batch(rows: list[tuple], target: pa.Schema, conform: Any) -> pa.RecordBatch:
    cols = list(zip(*rows, strict=True))
    arrays = [
        pa.array(cols[0], pa.string()),
        pa.array(cols[1], pa.string()),
        pa.array(cols[2], pa.string()),
        pa.array(cols[3], pa.int64()),
        pa.array(cols[4], pa.string()),
        pa.array(cols[5], pa.map_(pa.string(), pa.string())),
    ]
    raw = pa.RecordBatch.from_arrays(arrays, names=list(CATALOG_COLUMNS))
    return conform(raw, target, check_nulls=False)


__all__ = [
    "CatalogScanReader",
    "FilePartition",
    "RangePartition",
    "ResolvedRead",
    "TableReader",
    "default_parallelism",
    "open_catalog",
    "pack",
    "resolve_read",
]
