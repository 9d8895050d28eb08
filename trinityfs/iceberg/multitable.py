"""Several tables changed in ONE catalog version: `TrinityCatalog.multi_table_transaction()`."""

from __future__ import annotations

import logging
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pyiceberg.exceptions import CommitStateUnknownException
from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata

from trinityfs.errors import AmbiguousWriteError
from trinityfs.iceberg.errors import iceberg_errors
from trinityfs.iceberg.io import confined_file_io

if TYPE_CHECKING:
    from trinityfs.iceberg.catalog import TrinityCatalog

log = logging.getLogger(__name__)

UNKNOWN_OUTCOME = (AmbiguousWriteError, CommitStateUnknownException)


def delete_quietly(io: FileIO, location: str) -> None:
    try:
        io.delete(location)
    except Exception as exc:  # best effort: an orphan file is harmless
        log.warning("could not remove %s after a failed commit: %s", location, exc)


def files_added_by(io: FileIO, base: TableMetadata | None, staged: TableMetadata) -> list[str]:
    """Files a staged metadata added over `base`: new snapshots' manifest lists, their new
    manifests and the data files those added (what to remove when it never commits)."""
    old_ids = {s.snapshot_id for s in (base.snapshots if base is not None else [])}
    new_snapshots = [s for s in staged.snapshots if s.snapshot_id not in old_ids]
    new_ids = {s.snapshot_id for s in new_snapshots}
    files: list[str] = []
    seen: set[str] = set()
    for snap in new_snapshots:
        files.append(snap.manifest_list)
        for manifest in snap.manifests(io):
            if manifest.added_snapshot_id not in new_ids or manifest.manifest_path in seen:
                continue
            seen.add(manifest.manifest_path)
            files.append(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                if entry.snapshot_id in new_ids and int(entry.status) == 1:  # ADDED
                    files.append(entry.data_file.file_path)
    return files


class MultiTableTransaction:
    """Changes to several tables (and namespaces) committed as one catalog version.

    Inside the block, `mt.load_table(...)`, `mt.create_table(...)`, `mt.drop_table(...)`,
    `mt.create_namespace(...)`, ... behave like the catalog's, except that nothing is
    visible to others until the block ends: every table commit (append, overwrite,
    schema change, ...) is staged in one catalog transaction, reads see the staged state.
    Leaving the block commits; an exception aborts and removes the Iceberg files the
    staged commits wrote (`remove_added_files=False`: only the metadata files the catalog
    wrote, as for changes whose data files a REST client wrote). A concurrent commit to
    one of the same tables makes the commit fail with CommitFailedException (retry the
    whole block).
    """

    def __init__(self, catalog: TrinityCatalog, *, remove_added_files: bool = True):
        self._parent = catalog
        self.catalog = catalog.staged_in(catalog.lakehouse.transaction())
        self.committed_version: int | None = None
        self.remove_added_files = remove_added_files

    def __getattr__(self, name: str) -> Any:
        return getattr(self.catalog, name)

    def __enter__(self) -> MultiTableTransaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @property
    def base_version(self) -> int:
        return self.catalog._staging.version

    def commit(self) -> int:
        """Commit every staged change as one catalog version; returns it."""
        txn = self.catalog._staging
        if txn is None:
            raise RuntimeError("this multi-table transaction is already closed")
        try:
            with iceberg_errors("multi-table transaction"):
                version = txn.commit()
        except BaseException as exc:
            # files are removed only when the commit is known not to have landed: after
            # an unknown outcome (or an interrupt) the tables may name them already
            # (a commit that landed and then raised, e.g. an undo that failed, names them)
            landed = txn.txn.committed_version is not None
            if isinstance(exc, Exception) and not isinstance(exc, UNKNOWN_OUTCOME) and not landed:
                self._cleanup()
            raise
        finally:
            self.catalog._staging = None
        self.committed_version = version
        self._parent.last_committed_version = version
        return version

    def abort(self) -> None:
        """Forget every staged change and remove the files it wrote."""
        txn = self.catalog._staging
        if txn is None:
            return
        txn.abort()
        self.catalog._staging = None
        self._cleanup()

    def _cleanup(self) -> None:
        """Remove the metadata files the staged commits wrote and, with
        `remove_added_files`, the files their new snapshots added (written by this
        process's PyIceberg; a REST client's files are its own: it may commit them again)."""
        io = None
        for _ident, base, location, metadata in reversed(self.catalog._written):
            io = confined_file_io(self.catalog.properties, location)
            paths: list[str] = []
            if self.remove_added_files:
                try:
                    paths = files_added_by(io, base, metadata)
                except Exception as exc:
                    log.warning("could not list the files of a staged commit: %s", exc)
            for path in [*paths, location]:
                delete_quietly(io, path)
        self.catalog._written = []


__all__ = ["MultiTableTransaction", "delete_quietly", "files_added_by"]
