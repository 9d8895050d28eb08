"""The `trinitylake` PySpark data source (PySpark 4 Python Data Source API).

Reading a table:
    spark.read.format("trinitylake").option("root", ROOT).load("ns.table")
    options: version | timestamp (read as of a catalog version), columns ("a,b": read
    only these), plus any TrinityCatalog property (warehouse, storage-options, s3.*).
    The driver plans the scan with PyIceberg (one Spark partition per data file);
    executors read their files with pyarrow (PyIceberg's ArrowScan: field-id projection,
    schema evolution, position deletes). Spark 4's Python data sources get no column
    list from the optimizer, so column pruning is driven by the read itself: name the
    columns with `.option("columns", "a,b")` or a user schema `.schema("a long, b string")`;
    only those columns are read from the Parquet files.

Reading the catalog itself:
    spark.read.format("trinitylake").option("root", ROOT).load()
    one row per namespace, table and view: kind, namespace, name, version, definition
    (JSON), properties. The key space is cut into ranges from the upper tree levels
    (option `splits`, default 8) and executors read the ranges in parallel.

Writing:
    df.write.format("trinitylake").option("root", ROOT).mode("append"|"overwrite").save("ns.t")
    executors write Parquet data files (unique names) and return their metadata in
    commit messages; the driver commit makes ONE Iceberg snapshot and ONE catalog commit
    (creating the table from the DataFrame schema when it does not exist). A failed job
    changes nothing and its files are removed. Concurrent appends both land (PyIceberg
    rebases the append); an overwrite whose table changed since the job started fails
    with `TrinityLakeWriteConflict`.
"""

from __future__ import annotations

import itertools
import json
import logging
import pickle
import random
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

log = logging.getLogger(__name__)

NAME = "trinitylake"
# Options of the data source itself; every other option is a TrinityCatalog property.
_SOURCE_OPTIONS = {"path", "columns", "splits", "namespace", "table", "snapshot-properties"}
DEFAULT_SPLITS = 8
ABORT_MIN_SECONDS = 5.0
ABORT_QUIET_SECONDS = 3.0
ABORT_MAX_SECONDS = 30.0

CATALOG_SCHEMA = StructType(
    [
        StructField("kind", StringType(), False),
        StructField("namespace", StringType(), False),
        StructField("name", StringType(), True),
        StructField("version", LongType(), False),
        StructField("definition", StringType(), True),
        StructField("properties", MapType(StringType(), StringType(), True), True),
    ]
)


class TrinityLakeWriteConflict(RuntimeError):
    """A write job lost to a concurrent change of its table; nothing was committed."""


# -- options ------------------------------------------------------------------------


def _catalog_properties(options: Any) -> dict[str, str]:
    props = {str(k).lower(): str(v) for k, v in dict(options).items()}
    if not props.get("root"):
        raise ValueError(
            "the trinitylake data source needs .option('root', <lakehouse URL>) "
            "(a local path, file://, s3://bucket/prefix)"
        )
    return {k: v for k, v in props.items() if k not in _SOURCE_OPTIONS}


def _identifier(options: Any) -> tuple[str, str] | None:
    opts = {str(k).lower(): str(v) for k, v in dict(options).items()}
    if opts.get("namespace") or opts.get("table"):
        if not (opts.get("namespace") and opts.get("table")):
            raise ValueError("give both options 'namespace' and 'table' (or load('ns.table'))")
        return opts["namespace"], opts["table"]
    path = opts.get("path")
    if not path:
        return None
    parts = path.split(".")
    if len(parts) != 2 or not all(parts):
        raise ValueError(
            f"{path!r} is not namespace.table (TrinityLake has exactly two levels; for "
            "names containing dots use the options 'namespace' and 'table')"
        )
    return parts[0], parts[1]


def _columns(options: Any) -> list[str] | None:
    opts = {str(k).lower(): str(v) for k, v in dict(options).items()}
    value = opts.get("columns")
    if not value:
        return None
    return [c.strip() for c in value.split(",") if c.strip()]


def _open_catalog(props: dict[str, str]) -> Any:
    from trinityfs.iceberg import TrinityCatalog

    return TrinityCatalog(NAME, **props)


# -- the data source ----------------------------------------------------------------


class TrinityLakeDataSource(DataSource):
    """`spark.read/write.format("trinitylake")`; register with trinityfs.spark.register."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        ident = _identifier(self.options)
        if ident is None:
            return CATALOG_SCHEMA
        from trinityfs.spark.types import spark_schema

        catalog = _open_catalog(_catalog_properties(self.options))
        table = catalog.load_table(ident)
        return spark_schema(_projected(table.schema(), _columns(self.options)))

    def reader(self, schema: StructType) -> DataSourceReader:
        props = _catalog_properties(self.options)
        ident = _identifier(self.options)
        if ident is None:
            splits = int(dict(self.options).get("splits", DEFAULT_SPLITS))
            return CatalogScanReader(props, splits)
        return TableReader(props, ident, schema)

    def writer(self, schema: StructType, overwrite: bool) -> TableWriter:
        props = _catalog_properties(self.options)
        if props.get("version") or props.get("timestamp"):
            raise ValueError("cannot write at an old catalog version: drop 'version'/'timestamp'")
        ident = _identifier(self.options)
        if ident is None:
            raise ValueError("save('namespace.table'): the table to write is missing")
        raw = {str(k).lower(): str(v) for k, v in dict(self.options).items()}
        snapshot_props = json.loads(raw.get("snapshot-properties", "{}"))
        return TableWriter.plan(props, ident, schema, overwrite, snapshot_props)


def _projected(schema: Any, columns: list[str] | None) -> Any:
    if not columns:
        return schema
    return schema.select(*columns, case_sensitive=True)


# -- reading a table ----------------------------------------------------------------


@dataclass(repr=False)
class FilePartition(InputPartition):
    """One data file of the scan (a pickled PyIceberg FileScanTask)."""

    index: int
    path: str
    task: bytes

    def __repr__(self) -> str:
        return f"FilePartition({self.index}, {self.path!r})"


class TableReader(DataSourceReader):
    def __init__(self, props: dict[str, str], ident: tuple[str, str], schema: StructType):
        catalog = _open_catalog(props)
        table = catalog.load_table(ident)
        self.props = dict(catalog.properties)
        self.ident = ident
        self.metadata_location = table.metadata_location
        self.metadata_json = table.metadata.model_dump_json()
        self.snapshot_id = table.metadata.current_snapshot_id
        self.columns = [f.name for f in schema.fields]
        self.spark_schema = schema
        known = {f.name for f in table.schema().fields}
        missing = [c for c in self.columns if c not in known]
        if missing:
            raise ValueError(f"columns {missing} are not in table {'.'.join(ident)}")

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

    def partitions(self) -> list[InputPartition]:
        if self.snapshot_id is None:
            return []
        scan = self._table().scan(selected_fields=tuple(self.columns))
        return [
            FilePartition(i, task.file.file_path, pickle.dumps(task))
            for i, task in enumerate(scan.plan_files())
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FilePartition):
            return  # an empty table: Spark's single placeholder partition
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.io.pyarrow import ArrowScan

        from trinityfs.spark.types import conform, to_spark_arrow_schema

        table = self._table()
        task = pickle.loads(partition.task)
        projected = table.metadata.schema().select(*self.columns, case_sensitive=True)
        target = to_spark_arrow_schema(self.spark_schema)
        scan = ArrowScan(table.metadata, table.io, projected, AlwaysTrue(), case_sensitive=True)
        for batch in scan.to_record_batches([task]):
            if batch.num_rows:
                yield conform(batch, target, check_nulls=False)


# -- reading the catalog ------------------------------------------------------------


@dataclass
class RangePartition(InputPartition):
    """Objects with keys in (after, until] of one catalog version."""

    after: Any
    until: Any


def _open_lakehouse(props: dict[str, str]) -> Any:
    from trinityfs.catalog import Lakehouse
    from trinityfs.iceberg.io import parse_storage_options, storage_options_from_s3_properties

    opts = parse_storage_options(props.get("storage-options"))
    if opts is None and props["root"].startswith(("s3://", "s3a://")):
        opts = storage_options_from_s3_properties(props)
    return Lakehouse.open(props["root"], storage_options=opts)


class CatalogScanReader(DataSourceReader):
    def __init__(self, props: dict[str, str], splits: int):
        from trinityfs.iceberg.catalog import parse_timestamp

        self.props = props
        self.splits = max(1, splits)
        lake = _open_lakehouse(props)
        if props.get("version"):
            self.version = int(props["version"])
        elif props.get("timestamp"):
            self.version = lake.version_at(parse_timestamp(props["timestamp"]))
        else:
            self.version = lake.latest_version()

    def partitions(self) -> list[InputPartition]:
        from trinityfs.catalog.ranges import split_points

        snap = _open_lakehouse(self.props).at(self.version)
        points = split_points(snap, self.splits)
        bounds = [None, *points, None]
        return [RangePartition(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from google.protobuf import json_format

        from trinityfs.catalog.ranges import scan_range
        from trinityfs.spark.types import conform, to_spark_arrow_schema

        after = getattr(partition, "after", None)
        until = getattr(partition, "until", None)
        snap = _open_lakehouse(self.props).at(self.version)
        target = to_spark_arrow_schema(CATALOG_SCHEMA)

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
    raw = pa.RecordBatch.from_arrays(arrays, names=[f.name for f in CATALOG_SCHEMA.fields])
    return conform(raw, target, check_nulls=False)


# -- writing ------------------------------------------------------------------------


@dataclass
class TrinityCommitMessage(WriterCommitMessage):
    """What one task wrote: the DataFiles (for the snapshot) and every file it created."""

    data_files: list[Any] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    rows: int = 0


class _RecordingIO:
    """A FileIO that remembers every file it was asked to create."""

    def __init__(self, io: Any):
        self._io = io
        self.created: list[str] = []
        self.properties = io.properties

    def new_input(self, location: str) -> Any:
        return self._io.new_input(location)

    def new_output(self, location: str) -> Any:
        self.created.append(location)
        return self._io.new_output(location)

    def delete(self, location: Any) -> None:
        self._io.delete(location)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._io, name)


def _task_number() -> int:
    """A number unique to this task attempt within the job (first file name counter)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return random.getrandbits(40) * 1000
    return (ctx.partitionId() * 1000 + ctx.attemptNumber()) * 100000


def _remove(io: Any, paths: list[str]) -> int:
    removed = 0
    for path in paths:
        try:
            io.delete(path)
            removed += 1
        except FileNotFoundError:
            pass
        except Exception as exc:  # best effort: an unreferenced file harms no reader
            log.warning("could not remove %s: %s", path, exc)
    return removed


class TableWriter(DataSourceArrowWriter):
    """Planned on the driver, pickled to executors (write) and back to the driver (commit)."""

    def __init__(self) -> None:
        self.props: dict[str, str] = {}
        self.ident: tuple[str, str] = ("", "")
        self.overwrite = False
        self.created = False
        self.metadata_json = ""
        self.metadata_location = ""
        self.table_uuid = ""
        self.base_snapshot_id: int | None = None
        self.spec_id = 0
        self.job_id = ""
        self.snapshot_properties: dict[str, str] = {}

    @classmethod
    def plan(
        cls,
        props: dict[str, str],
        ident: tuple[str, str],
        schema: StructType,
        overwrite: bool,
        snapshot_properties: dict[str, str],
    ) -> TableWriter:
        from pyiceberg.exceptions import NoSuchTableError
        from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
        from pyiceberg.table.locations import load_location_provider
        from pyiceberg.table.metadata import new_table_metadata
        from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

        from trinityfs.spark.types import iceberg_schema_from_spark

        catalog = _open_catalog(props)
        self = cls()
        self.props = dict(catalog.properties)
        self.ident = ident
        self.overwrite = overwrite
        self.job_id = str(uuid.uuid4())
        self.snapshot_properties = {str(k): str(v) for k, v in snapshot_properties.items()}
        try:
            table = catalog.load_table(ident)
        except NoSuchTableError:
            table = None
        if table is not None:
            metadata, self.metadata_location = table.metadata, table.metadata_location
            self.base_snapshot_id = metadata.current_snapshot_id
            _check_columns(schema, metadata.schema(), ident)
        else:
            ns, name = ident
            if not catalog.namespace_exists(ns):
                raise ValueError(
                    f"namespace {ns!r} does not exist in {props['root']}: create it first"
                )
            location = catalog.check_location(
                catalog._resolve_table_location(None, ns, name), f"table {ns}.{name}: location"
            )
            metadata = new_table_metadata(
                schema=iceberg_schema_from_spark(schema),
                partition_spec=UNPARTITIONED_PARTITION_SPEC,
                sort_order=UNSORTED_SORT_ORDER,
                location=location,
                properties={},
            )
            provider = load_location_provider(location, metadata.properties)
            self.metadata_location = provider.new_table_metadata_file_location()
            self.created = True
        self.metadata_json = metadata.model_dump_json()
        self.table_uuid = str(metadata.table_uuid)
        self.spec_id = metadata.default_spec_id
        return self

    def _metadata(self) -> Any:
        from pyiceberg.table.metadata import TableMetadataUtil

        return TableMetadataUtil.parse_raw(self.metadata_json)

    def _io(self, metadata: Any) -> Any:
        from trinityfs.iceberg.io import confined_file_io

        return confined_file_io({**self.props, **metadata.properties}, metadata.location)

    # -- executors ------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TrinityCommitMessage:
        from pyiceberg.io.pyarrow import _dataframe_to_data_files, schema_to_pyarrow

        from trinityfs.spark.types import normalize_spark_batch

        metadata = self._metadata()
        io = _RecordingIO(self._io(metadata))
        target = schema_to_pyarrow(metadata.schema(), include_field_ids=False)
        message = TrinityCommitMessage()

        def batches() -> Iterator[pa.RecordBatch]:
            for batch in iterator:
                if batch.num_rows:
                    message.rows += batch.num_rows
                    yield normalize_spark_batch(batch, target)

        try:
            if metadata.spec().is_unpartitioned():
                source: Any = pa.RecordBatchReader.from_batches(target, batches())
            else:
                source = pa.Table.from_batches(list(batches()), schema=target)
            # Every file of the job is named 00000-<task>-<job id>.parquet: unique per
            # task attempt, and findable by job id when a task dies without cleaning up.
            files = _dataframe_to_data_files(
                table_metadata=metadata,
                df=source,
                io=io,
                write_uuid=uuid.UUID(self.job_id),
                counter=itertools.count(_task_number()),
            )
            message.data_files = [f for f in files if f.record_count > 0]
        except BaseException:
            _remove(io, io.created)  # a failed task leaves nothing behind
            raise
        message.paths = list(io.created)
        return message

    def _sweep(self) -> int:
        """Remove every data file of this job (by its id in the name): after a failure."""
        from pyiceberg.table.locations import load_location_provider

        metadata = self._metadata()
        provider = load_location_provider(metadata.location, metadata.properties)
        data_dir = provider.new_data_location("x").rsplit("/", 1)[0]
        from trinityfs.iceberg.io import location_policy

        if not location_policy(self.props).allows(data_dir):
            return 0  # never list (let alone delete) outside the allowed locations
        try:
            import fsspec

            from trinityfs.iceberg.io import (
                parse_storage_options,
                storage_options_from_s3_properties,
            )

            opts = parse_storage_options(self.props.get("storage-options"))
            if opts is None and data_dir.startswith(("s3://", "s3a://")):
                opts = storage_options_from_s3_properties(self.props)
            fs, path = fsspec.core.url_to_fs(data_dir, **(opts or {}))
            if not fs.exists(path):
                return 0
            mine = [f for f in fs.find(path) if self.job_id in f.rsplit("/", 1)[-1]]
            for f in mine:
                fs.rm_file(f)
            return len(mine)
        except Exception as exc:  # best effort: unreferenced files harm no reader
            log.warning("could not sweep the files of job %s: %s", self.job_id, exc)
            return 0

    # -- the driver -----------------------------------------------------------------

    def abort(self, messages: list[TrinityCommitMessage | None]) -> None:
        """Remove every file of the failed job.

        Spark calls this as soon as the job fails, while its other tasks are still being
        cancelled (a Python worker is killed up to spark.python.task.killTimeout later,
        possibly mid-write). So after removing the files the messages name, sweep the
        job's files by id until none has appeared for ABORT_QUIET_SECONDS (at least
        ABORT_MIN_SECONDS, at most ABORT_MAX_SECONDS).
        """
        paths = [p for m in messages if m is not None for p in m.paths]
        _remove(self._io(self._metadata()), paths)
        start = last = time.monotonic()
        while True:
            if self._sweep():
                last = time.monotonic()
            now = time.monotonic()
            if now - start >= ABORT_MAX_SECONDS or (
                now - start >= ABORT_MIN_SECONDS and now - last >= ABORT_QUIET_SECONDS
            ):
                return
            time.sleep(0.5)

    def commit(self, messages: list[TrinityCommitMessage | None]) -> None:
        from pyiceberg.exceptions import (
            CommitFailedException,
            TableAlreadyExistsError,
            ValidationException,
        )

        files = [f for m in messages if m is not None for f in m.data_files]
        paths = [p for m in messages if m is not None for p in m.paths]
        try:
            self._commit(files)
        except (
            TrinityLakeWriteConflict,
            CommitFailedException,
            ValidationException,
            TableAlreadyExistsError,
        ) as exc:
            _remove(self._io(self._metadata()), paths)  # known not committed
            self._sweep()
            if isinstance(exc, TrinityLakeWriteConflict):
                raise
            raise TrinityLakeWriteConflict(
                f"write to {'.'.join(self.ident)} lost to a concurrent change and was not "
                f"committed ({type(exc).__name__}: {exc}); its {len(paths)} data files were "
                "removed: rerun the job"
            ) from exc

    def _conflict(self, why: str) -> TrinityLakeWriteConflict:
        mode = "overwrite" if self.overwrite else "append"
        return TrinityLakeWriteConflict(
            f"{mode} of {'.'.join(self.ident)} not committed: {why}; nothing changed and the "
            "job's data files were removed: rerun the job"
        )

    def _commit(self, files: list[Any]) -> None:
        from pyiceberg.exceptions import NoSuchTableError, TableAlreadyExistsError
        from pyiceberg.table import CreateTableTransaction, StagedTable

        catalog = _open_catalog(self.props)
        props = {"trinitylake.spark.job-id": self.job_id, **self.snapshot_properties}
        try:
            table = catalog.load_table(self.ident)
        except NoSuchTableError:
            table = None
        if table is None and not self.created:
            raise self._conflict("the table was dropped while the job ran")
        if table is None:
            metadata = self._metadata()
            staged = StagedTable(
                identifier=self.ident,
                metadata=metadata,
                metadata_location=self.metadata_location,
                io=self._io(metadata),
                catalog=catalog,
            )
            txn = CreateTableTransaction(staged)
            with txn.update_snapshot(snapshot_properties=props).fast_append() as append:
                for f in files:
                    append.append_data_file(f)
            try:
                txn.commit_transaction()
                return
            except TableAlreadyExistsError:
                table = catalog.load_table(self.ident)  # another job created it meanwhile
            if self.overwrite:
                raise self._conflict("another job created the table while this one ran")
            if not _same_layout(table.metadata, self._metadata()):
                raise self._conflict(
                    "another job created the table meanwhile, with a different schema"
                )
        elif str(table.metadata.table_uuid) != self.table_uuid and not self.created:
            raise self._conflict("the table was dropped and recreated while the job ran")
        elif self.created and not _same_layout(table.metadata, self._metadata()):
            raise self._conflict("another job created the table meanwhile, with a different schema")
        if table.metadata.default_spec_id != self.spec_id and not self.created:
            raise self._conflict("the table's partition spec changed while the job ran")
        current = table.metadata.current_snapshot_id
        if self.overwrite and current != self.base_snapshot_id:
            raise self._conflict(
                f"the table changed while the job ran (snapshot {self.base_snapshot_id} -> "
                f"{current})"
            )
        txn = table.transaction()
        update = txn.update_snapshot(snapshot_properties=props)
        if self.overwrite:
            producer = update.overwrite()
            if current is not None:
                for task in table.scan(snapshot_id=current).plan_files():
                    producer.delete_data_file(task.file)
        else:
            producer = update.fast_append()
        with producer:
            for f in files:
                producer.append_data_file(f)
        txn.commit_transaction()


def _check_columns(schema: StructType, table_schema: Any, ident: tuple[str, str]) -> None:
    """Refuse, before any file is written, a DataFrame the table cannot hold as is."""
    names = {f.name for f in table_schema.fields}
    extra = [f.name for f in schema.fields if f.name not in names]
    if extra:
        raise ValueError(
            f"DataFrame columns {extra} are not in table {'.'.join(ident)} (columns "
            f"{sorted(names)}): add them to the table first (PyIceberg update_schema)"
        )
    given = {f.name for f in schema.fields}
    missing = [f.name for f in table_schema.fields if f.required and f.name not in given]
    if missing:
        raise ValueError(f"required columns {missing} of {'.'.join(ident)} are missing")


def _same_layout(a: Any, b: Any) -> bool:
    """Whether data files written for metadata `b` fit a table with metadata `a`."""
    sa, sb = a.schema(), b.schema()
    return [(f.field_id, f.name, str(f.field_type)) for f in sa.fields] == [
        (f.field_id, f.name, str(f.field_type)) for f in sb.fields
    ] and a.spec().is_unpartitioned() == b.spec().is_unpartitioned()


__all__ = [
    "CATALOG_SCHEMA",
    "NAME",
    "TableWriter",
    "TrinityCommitMessage",
    "TrinityLakeDataSource",
    "TrinityLakeWriteConflict",
]
