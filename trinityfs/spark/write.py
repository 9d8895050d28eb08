"""Writing with the `trinitylake` source: executors write Parquet files, the driver makes
ONE Iceberg snapshot and ONE catalog commit (or stages it in a catalog transaction).

Modes: `append`; `overwrite` replaces the whole table (static), only the partitions the
job wrote (`partitionOverwriteMode=dynamic`), or only the rows matching
`overwrite-filter`. Type rules are PyIceberg's append rules: the DataFrame's schema must
be compatible with the table's (safe promotions such as int -> long or float -> double
are allowed; narrowing or lossy casts are refused naming the column) before any task
runs, and executors cast with overflow/truncation checks on. A new table takes its
schema from the DataFrame and identity partitions from `partition-by` / `partitionBy`;
an existing table's own partition spec (identity, day/month/year/hour, bucket,
truncate) is honoured by PyIceberg's partitioned writer.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.errors import TrinityLakeWriteConflict, spark_errors
from trinityfs.spark.options import JOB_ID, SourceOptions
from trinityfs.spark.read import open_catalog
from trinityfs.spark.rules import (
    bound_filter,
    check_columns,
    check_rows_match,
    check_types,
    identity_columns,
    identity_spec,
    overwrite_mode,
    same_layout,
)

log = logging.getLogger(__name__)

ABORT_MIN_SECONDS = 5.0
ABORT_QUIET_SECONDS = 3.0
ABORT_MAX_SECONDS = 30.0


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


def _existing_table(catalog: Any, ident: tuple[str, str]) -> Any:
    """The Iceberg table `ident`, or None when no table has that name; a table of
    another format (DELTA, ...) holding it raises NoSuchIcebergTableError: the job must
    neither create over it nor write files for a commit that cannot land."""
    from pyiceberg.exceptions import NoSuchIcebergTableError, NoSuchTableError

    try:
        return catalog.load_table(ident)
    except NoSuchIcebergTableError:
        raise
    except NoSuchTableError:
        return None


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
        self.overwrite_mode = "static"  # or "dynamic", or "filter"
        self.overwrite_filter: str | None = None
        self.transaction: str | None = None
        self._attempted = False  # commit() got as far as committing (reset by commit())

    @classmethod
    def plan(cls, opts: SourceOptions, schema: StructType, overwrite: bool) -> TableWriter:
        """Check everything that can be checked before a task runs (see module doc)."""
        assert opts.ident is not None
        ident = opts.ident
        if not overwrite and (opts.overwrite_mode or opts.overwrite_filter):
            name = "overwrite-filter" if opts.overwrite_filter else "partitionOverwriteMode"
            raise InvalidArgumentError(
                f"trinitylake option {name!r} applies to mode('overwrite') only, not to an append"
            )
        with spark_errors(f"writing {'.'.join(ident)}"):
            return cls._plan(opts, schema, overwrite)

    @classmethod
    def _plan(cls, opts: SourceOptions, schema: StructType, overwrite: bool) -> TableWriter:
        """plan() without the error translation."""
        from pyiceberg.table.locations import load_location_provider
        from pyiceberg.table.metadata import new_table_metadata
        from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

        from trinityfs.spark.types import iceberg_schema_from_spark

        assert opts.ident is not None
        ident = opts.ident
        catalog = open_catalog(opts.catalog)
        self = cls()
        self.props = dict(catalog.properties)
        self.ident = ident
        self.overwrite = overwrite
        self.job_id = str(uuid.uuid4())
        self.snapshot_properties = dict(opts.snapshot_properties)
        self.transaction = opts.transaction
        if opts.transaction:  # plan against what the transaction has staged so far
            catalog, _ = _staging_catalog(catalog, opts.transaction)
        # absent: created by the job; a non-Iceberg table of that name (NoSuchIcebergTable
        # Error) is refused here, as a read of it is, before any task writes a file
        table = _existing_table(catalog, ident)
        if table is not None:
            metadata, self.metadata_location = table.metadata, table.metadata_location
            self.base_snapshot_id = metadata.current_snapshot_id
            check_columns(schema, metadata.schema(), ident)
            check_types(schema, metadata, ident)
            if opts.partition_by and identity_columns(metadata) != opts.partition_by:
                raise InvalidArgumentError(
                    f"partitionBy({', '.join(opts.partition_by)}) does not match the "
                    f"partition spec of the existing table {'.'.join(ident)} "
                    f"({metadata.spec()}); the table's own spec is used: drop partitionBy"
                )
        else:
            ns, name = ident
            if not catalog.namespace_exists(ns):
                raise InvalidArgumentError(
                    f"namespace {ns!r} does not exist in {opts.catalog['root']}: create it first"
                )
            location = catalog.check_location(
                catalog._resolve_table_location(None, ns, name), f"table {ns}.{name}: location"
            )
            catalog.check_new_table_name(ns, name)  # before any task writes a file for it
            iceberg_schema = iceberg_schema_from_spark(schema)
            metadata = new_table_metadata(
                schema=iceberg_schema,
                partition_spec=identity_spec(iceberg_schema, opts.partition_by),
                sort_order=UNSORTED_SORT_ORDER,
                location=location,
                properties={},
            )
            provider = load_location_provider(location, metadata.properties)
            self.metadata_location = provider.new_table_metadata_file_location()
            self.created = True
        if overwrite:
            self.overwrite_mode = overwrite_mode(opts, metadata, ident, self.created)
            if opts.overwrite_filter:
                bound_filter(opts.overwrite_filter, metadata.schema())  # fails now if bad
                self.overwrite_filter = opts.overwrite_filter
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

        row_check = None
        if self.overwrite_filter:
            from pyiceberg.io.pyarrow import expression_to_pyarrow

            row_check = expression_to_pyarrow(
                bound_filter(self.overwrite_filter, metadata.schema()), metadata.schema()
            )

        def batches() -> Iterator[pa.RecordBatch]:
            for batch in iterator:
                if batch.num_rows:
                    message.rows += batch.num_rows
                    out = normalize_spark_batch(batch, target)
                    if row_check is not None:
                        check_rows_match(out, row_check, self.overwrite_filter or "")
                    yield out

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

        A message is None for a task that failed. Spark calls commit() only when every
        task succeeded, so then no commit of this job was attempted: its files are
        removed without reading the table (which may not be readable: a catalog
        transaction closed meanwhile). Otherwise commit() raised, and files of a
        snapshot of this job that landed must stay.
        """
        tasks_failed = any(m is None for m in messages)
        landed = False if tasks_failed else self._landed()
        if landed is not False:
            # Spark aborts after a commit that raised, also when its outcome was unknown
            # (AmbiguousWriteError): files a landed snapshot names must stay
            log.warning(
                "abort of the write to %s removes no file: %s",
                ".".join(self.ident),
                "its commit landed"
                if landed
                else "whether its commit landed is unknown (reclaim_files removes them if not)",
            )
            return
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

    def _landed(self) -> bool | None:
        """Whether a snapshot of this job is in the table (its job id in the snapshot
        summary): True, False, or None when the table cannot be read now."""
        from pyiceberg.exceptions import NoSuchTableError

        try:
            catalog = open_catalog(self.props)
            if self.transaction:
                catalog, _ = _staging_catalog(catalog, self.transaction)
            table = catalog.load_table(self.ident)
        except NoSuchTableError:  # NoSuchIcebergTableError included: nothing of ours
            return False
        except Exception as exc:
            log.warning("could not read %s after its job failed: %s", ".".join(self.ident), exc)
            return None
        return any(
            s.summary is not None and s.summary.get(JOB_ID) == self.job_id
            for s in table.metadata.snapshots
        )

    def commit(self, messages: list[TrinityCommitMessage | None]) -> None:
        from pyiceberg.exceptions import (
            CommitFailedException,
            TableAlreadyExistsError,
            ValidationException,
        )

        files = [f for m in messages if m is not None for f in m.data_files]
        paths = [p for m in messages if m is not None for p in m.paths]
        self._attempted = False  # set by _commit just before it commits anything
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
                f"write to {'.'.join(self.ident)} not committed: it lost to a concurrent "
                f"change of the table and its {len(paths)} data files were removed: rerun "
                f"the job ({type(exc).__name__}: {exc})"
            ) from exc
        except BaseException:
            if not self._attempted:
                # raised before any commit (the catalog transaction closed, the table
                # unreadable, a filter that no longer binds): nothing of this job can
                # have landed, and abort() may not be able to read the table to tell
                self._remove_unlanded(paths)
            raise

    def _remove_unlanded(self, paths: list[str]) -> None:
        """Remove the files of this job that no commit can have landed (best effort)."""
        try:
            _remove(self._io(self._metadata()), paths)
            self._sweep()
        except Exception as exc:  # an unreferenced file harms no reader
            log.warning("could not remove the files of job %s: %s", self.job_id, exc)

    def _conflict(self, why: str) -> TrinityLakeWriteConflict:
        mode = "overwrite" if self.overwrite else "append"
        return TrinityLakeWriteConflict(
            f"{mode} of {'.'.join(self.ident)} not committed: {why}; nothing changed and the "
            "job's data files were removed: rerun the job"
        )

    def _commit(self, files: list[Any]) -> None:
        from pyiceberg.exceptions import (
            NoSuchIcebergTableError,
            NoSuchTableError,
            TableAlreadyExistsError,
        )
        from pyiceberg.table import CreateTableTransaction, StagedTable

        catalog = open_catalog(self.props)
        dtxn = None
        if self.transaction:
            catalog, dtxn = _staging_catalog(catalog, self.transaction)
        props = {**self.snapshot_properties, JOB_ID: self.job_id}  # the job's own id wins
        try:
            table = _existing_table(catalog, self.ident)
        except NoSuchIcebergTableError as exc:
            why = f"a table that is not an Iceberg table took the name ({exc})"
            raise self._conflict(why) from None
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
                self._attempted = True
                txn.commit_transaction()
                if dtxn is not None:
                    dtxn.save()
                return
            except TableAlreadyExistsError:
                try:  # another job created it meanwhile
                    table = catalog.load_table(self.ident)
                except NoSuchTableError as exc:  # a non-Iceberg table, or dropped again
                    why = f"another table took the name meanwhile ({exc})"
                    raise self._conflict(why) from None
            if self.overwrite:
                raise self._conflict("another job created the table while this one ran")
            if not same_layout(table.metadata, self._metadata()):
                raise self._conflict(
                    "another job created the table meanwhile, with a different schema"
                )
        elif str(table.metadata.table_uuid) != self.table_uuid and not self.created:
            raise self._conflict("the table was dropped and recreated while the job ran")
        elif self.created and not same_layout(table.metadata, self._metadata()):
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
        if self.overwrite and self.overwrite_mode == "static":
            producer = txn.update_snapshot(snapshot_properties=props).overwrite()
            if current is not None:
                for task in table.scan(snapshot_id=current).plan_files():
                    producer.delete_data_file(task.file)
        else:
            if self.overwrite and current is not None:
                txn.delete(delete_filter=self._delete_filter(txn, files), snapshot_properties=props)
            producer = txn.update_snapshot(snapshot_properties=props).fast_append()
        with producer:
            for f in files:
                producer.append_data_file(f)
        self._attempted = True
        txn.commit_transaction()
        if dtxn is not None:
            dtxn.save()

    def _delete_filter(self, txn: Any, files: list[Any]) -> Any:
        """What an overwrite replaces: the rows matching `overwrite-filter`, or (dynamic)
        the partitions the job wrote."""
        from pyiceberg.expressions import AlwaysFalse

        metadata = txn.table_metadata
        if self.overwrite_mode == "filter":
            from pyiceberg.expressions import parser

            bound_filter(self.overwrite_filter or "", metadata.schema())  # still valid?
            return parser.parse(self.overwrite_filter or "")  # PyIceberg binds it itself
        if not files:
            return AlwaysFalse()  # dynamic overwrite with no rows replaces nothing
        schema = metadata.schema()
        fields = [schema.find_field(f.source_id).name for f in metadata.spec().fields]
        return txn._build_partition_predicate(
            partition_records={f.partition for f in files}, partition_fields=fields
        )


def _staging_catalog(catalog: Any, txn_id: str) -> tuple[Any, Any]:
    """(a catalog whose writes are staged in the catalog transaction `txn_id`, it)."""
    from trinityfs.errors import TrinityError

    try:
        dtxn = catalog.lakehouse.load_distributed(txn_id)
    except TrinityError as exc:
        raise InvalidArgumentError(
            f"trinitylake option 'transaction': no open catalog transaction {txn_id!r} ({exc})"
        ) from None
    return catalog.staged_in(dtxn), dtxn


__all__ = ["TableWriter", "TrinityCommitMessage", "TrinityLakeWriteConflict"]
