"""Dropping snapshot exports, and committing changes to the LakehouseDef that records them.

`drop_export` commits the record's removal first, then deletes the files. Only the
record this call removed vouches for the files at its location: any other file of that
name may belong to an export that another process is writing right now (files first,
record last; see docs/LIFECYCLE.md, "Exports"). So, without such a record:

- an `_exports/<name>/` directory (a full export) is spared while any of its files is
  younger than the commit window plus margin, expiration's rule for the same
  directories (`RetentionPolicy.of(ldef, grace_millis=0)`); so is the root copy
  `_export_<name>.arrow` (minimal, partial) while it is that young;
- an old root copy is read before it is deleted and put back when the name is recorded
  at that location once it is gone (the record of a creator paused past the window
  landed meanwhile). create_export checks after its record for the opposite order
  (`trinityfs.lifecycle.exports._check_files_kept`).

A full export's claim (`_oldest_version.txt` inside) is deleted last: until it is gone
no other export of that name starts writing into the directory being emptied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from trinityfs.errors import (
    CommitConflictError,
    StorageFileNotFoundError,
    VersionNotFoundError,
)
from trinityfs.format.paths import OLDEST_VERSION, export_root_location, full_export_prefix
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle.inventory import COLLECTABLE, MARKER, ROOT, Inventory, StoredFile
from trinityfs.lifecycle.retention import RetentionPolicy
from trinityfs.lifecycle.stamps import clock_ahead
from trinityfs.storage.settle import create_settled
from trinityfs.txn.conflicts import LAKEHOUSE_DEF_KEY
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.transaction import Transaction

RECORD_ATTEMPTS = 32


@dataclass
class DroppedExport:
    name: str
    recorded_location: str | None
    removed: list[StoredFile] = field(default_factory=list)
    left: list[StoredFile] = field(default_factory=list)  # unknown files in its directory
    # files without a record kept because an export of that name may be being written
    spared: list[StoredFile] = field(default_factory=list)
    note: str | None = None  # why files were spared

    @property
    def bytes_removed(self) -> int:
        return sum(f.size for f in self.removed)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "recorded_location": self.recorded_location,
            "removed": [f.to_dict() for f in self.removed],
            "bytes_removed": self.bytes_removed,
            "left": [f.to_dict() for f in self.left],
            "spared": [f.to_dict() for f in self.spared],
            "note": self.note,
        }


def update_lakehouse_def(engine: Engine, change: Callable[[LakehouseDef], bool]) -> int | None:
    """Commit a new LakehouseDef made by `change` from the latest one.

    `change` edits a copy in place and returns False when there is nothing to do. Lost
    races on the lakehouse definition are retried from the new latest definition
    (`change` runs again, so it can re-check its preconditions). Returns the committed
    version, or None when nothing changed.
    """
    for _ in range(RECORD_ATTEMPTS):
        base = engine.snapshot()
        ldef = LakehouseDef()
        ldef.CopyFrom(base.lakehouse_def)
        if not change(ldef):
            return None
        txn = Transaction(engine, base)
        txn.set_lakehouse_def(ldef)
        try:
            return txn.commit()
        except CommitConflictError as exc:
            if exc.key != LAKEHOUSE_DEF_KEY:
                raise
    raise CommitConflictError(LAKEHOUSE_DEF_KEY, engine.roots.latest_version())


def recorded_at(engine: Engine, name: str, location: str) -> bool:
    """Whether the latest LakehouseDef records export `name` at `location`."""
    return engine.snapshot().lakehouse_def.exported_snapshots.get(name) == location


def drop_export(engine: Engine, name: str) -> DroppedExport:
    """Remove export `name`: first its record (a new LakehouseDef), then its files.

    Also cleans up what a crashed export of that name left behind (files without a
    record), except files that may belong to an export of that name still being
    written (listed in `spared`, see `note`); VersionNotFoundError when there is
    neither a record nor any file.
    """
    root_copy = export_root_location(name)
    prefix = full_export_prefix(name)
    removed_record: list[str] = []

    def remove(ldef: LakehouseDef) -> bool:
        removed_record.clear()
        if name not in ldef.exported_snapshots:
            return False
        removed_record.append(ldef.exported_snapshots[name])
        del ldef.exported_snapshots[name]
        return True

    committed = update_lakehouse_def(engine, remove) is not None
    # Only the record this call removed vouches for files; any other file of that name
    # may be an export being written right now (its record comes last).
    recorded = removed_record[0] if committed and removed_record else None
    dropped = DroppedExport(name, recorded)
    _remove_root_copy(engine, name, recorded == root_copy, dropped)
    vouched = recorded is not None and recorded.startswith(prefix)
    _remove_directory(engine, name, vouched, dropped)
    if recorded is None and not (dropped.removed or dropped.left or dropped.spared):
        raise VersionNotFoundError(f"no export named {name!r} in {engine.storage.url}")
    return dropped


def _remove_root_copy(engine: Engine, name: str, vouched: bool, dropped: DroppedExport) -> None:
    """Delete `_export_<name>.arrow`.

    Without a record removed by this drop it may be the root of an export being
    written: it is spared while younger than the commit window plus margin (its age
    needs a listing of the lakehouse root, paid only on this rare path). An old one is
    read before it is deleted and put back if the name is recorded there once it is
    gone (a creator paused past the window whose record landed meanwhile; the
    export's own check after its record covers a record that lands later still).
    """
    storage = engine.storage
    location = export_root_location(name)
    if not storage.exists(location):
        return
    if not vouched:
        entry = next((e for e in storage.list("") if e.location == location), None)
        if entry is None:
            return
        stored = StoredFile(location, "export_root", entry.size)
        window, cutoff = _in_flight_cutoff(engine)
        if entry.mtime is None or entry.mtime * 1000 > cutoff:
            dropped.spared.append(stored)
            dropped.note = _spared_note(location, 1, window)
            return
    try:
        data = storage.read(location)
    except StorageFileNotFoundError:
        return
    storage.delete(location)
    stored = StoredFile(location, "export_root", len(data))
    if not vouched and recorded_at(engine, name, location):
        create_settled(storage, location, data, f"the root of export {name!r}")
        dropped.spared.append(stored)
        dropped.note = (
            f"export {name!r} was being created and its record landed while it was "
            f"dropped: it is kept (drop it again to remove it)"
        )
        return
    dropped.removed.append(stored)


def _in_flight_cutoff(engine: Engine) -> tuple[int, int]:
    """(window, cutoff) in ms: files without a record modified after the cutoff may
    belong to an export still being written (expiration's floor: the commit window,
    plus its margin for clock skew)."""
    policy = RetentionPolicy.of(engine.snapshot().lakehouse_def, grace_millis=0)
    window = policy.grace_millis + policy.margin_millis
    # mtimes are the store's: a clock ahead of it would take young files for old
    return window, now_millis() - window - clock_ahead(
        engine.storage, "drop_export would delete files without a record"
    )


def _spared_note(what: str, young: int, window: int) -> str:
    return (
        f"{what} has no record and {young} of its files are younger than {window // 1000} s "
        f"(the commit window plus margin): an export of that name may still be being "
        f"written, so it was not removed; drop it again later (expiration also removes "
        f"it once it is old)"
    )


def _remove_directory(engine: Engine, name: str, vouched: bool, dropped: DroppedExport) -> None:
    """Delete the format files of `_exports/<name>/` (unknown files are left).

    Without a record removed by this drop, the directory may be a full export still
    being copied: it is spared while any file in it is younger than the commit window
    plus margin (expiration's rule for the same directories).
    """
    storage = engine.storage
    prefix = full_export_prefix(name)
    inside = Inventory.scan(storage.child(prefix))
    ours = []
    for f in inside.entries.values():
        if f.kind in COLLECTABLE or f.kind == MARKER:
            ours.append(StoredFile(prefix + f.location, f.kind, f.size, f.mtime))
        else:
            dropped.left.append(StoredFile(prefix + f.location, f.kind, f.size))
    if not ours:
        return
    if not vouched:
        window, cutoff = _in_flight_cutoff(engine)
        young = [f for f in ours if f.mtime is None or f.mtime * 1000 > cutoff]
        if young:
            dropped.spared.extend(StoredFile(f.location, f.kind, f.size) for f in ours)
            dropped.note = _spared_note(prefix, len(young), window)
            return

    # Roots first (the export stops opening as a lakehouse), the claim last (until it
    # is gone no other export of that name can start writing into the directory).
    def rank(f: StoredFile) -> int:
        return 0 if f.kind == ROOT else 2 if f.location == prefix + OLDEST_VERSION else 1

    for f in sorted(ours, key=rank):
        storage.delete(f.location)
        dropped.removed.append(StoredFile(f.location, f.kind, f.size))


__all__ = ["DroppedExport", "drop_export", "recorded_at", "update_lakehouse_def"]
