"""Snapshot exports (FORMAT.md section 6): minimal, partial and full.

An export pins one version under a name, recorded as ``exported_snapshots[name]`` =
location of the export's root node file, in a new LakehouseDef committed like any
change. Expiration keeps every file reachable from an export. An export reads like a
version: its root is a node whose pointers resolve against the directory of that root
file.

- **minimal**: the version's root node, byte for byte, at ``_export_<name>.arrow``.
  Everything below it is shared with the lakehouse (and kept alive by the export).
- **partial** (``depth`` d >= 0, default 1): the root plus every internal node at depths
  1..d (the root is depth 0), copied under new names (optimized ``node-<uuid4>.arrow``)
  with the pointers between copies rewritten; pointers below depth d (and to leaves,
  which are never copied) are kept and point at the lakehouse's own nodes. Depth 0 is
  the minimal export. The copies are private to the export: a later rewrite of the
  upper tree never touches them.
- **full**: a standalone lakehouse in ``_exports/<name>/``. Every file reachable from
  the root (nodes, namespace/table/view definitions) is copied with its relative path
  unchanged. The root keeps its own name, ``_exports/<name>/`` + the root file of
  version v (so the export *is* version v of a lakehouse whose older versions were
  expired: ``_oldest_version.txt`` and ``_latest_hint.txt`` inside say v). Its
  LakehouseDef is a copy of version v's with ``exported_snapshots`` emptied (the other
  exports live outside the directory, and a standalone lakehouse must not point out of
  itself) and the property ``trinityfs.export.source-version`` = v; the copied root
  points at that copy, which is the only byte difference from the source root. So
  ``Lakehouse.open(<root>/_exports/<name>)`` works in place, and after the directory
  is copied anywhere else (another directory, bucket or store), with no path rewriting.

Files are written before the record is committed (an export is invisible until its
record lands). A record that could not be committed has its files removed again, except
when the outcome is unknown (AmbiguousWriteError: it may have landed), when they stay.
A minimal or partial export shares nodes with its version, so after its
record lands it checks that the version was not expired meanwhile (expiration writes
``_oldest_version.txt`` before deleting anything, and marks only the exports recorded
when it marks); if it was, the export is dropped again and VersionNotFoundError raised.
A full export copies everything, so a file expired under it fails the copy.
The root of a minimal/partial export and of a full export is created
with create-if-absent, so two exports racing for one name cannot overwrite each other.
Dropping an export commits the record's removal first, then deletes the files; a crash
between the two leaves unrecorded files that expiration reclaims once they are older
than the grace period (the private node copies of a partial export are always left to
expiration, which finds them unreachable).

Files without a record may belong to an export still being written in another process
(its record comes last), so dropping never takes them on trust (docs/LIFECYCLE.md,
"Exports"): the directory of an unrecorded full export is spared while any of its
files is younger than the commit window plus margin (expiration's own rule); an
unrecorded root copy is read before it is deleted and put back if the name turns out
to be recorded at that location afterwards. On the other side, create_export checks
after its record landed that its root (full: every file it wrote) is still there, puts
back a missing root copy, and never acknowledges a full export with files missing
(its record is removed again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass

from trinityfs.errors import (
    AlreadyExistsError,
    AmbiguousWriteError,
    InvalidArgumentError,
    StorageFileNotFoundError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import decode_lakehouse_def, encode_definition
from trinityfs.format.integrity import check_file_bytes
from trinityfs.format.keys import KEY_CREATED_AT_MILLIS, KEY_LAKEHOUSE_DEF, KEY_PREVIOUS_ROOT
from trinityfs.format.node_decode import decode_node
from trinityfs.format.node_encode import encode_node
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import (
    LATEST_HINT,
    OLDEST_VERSION,
    export_root_location,
    full_export_prefix,
    new_lakehouse_def_location,
    new_node_location,
    parse_root_node_file,
    root_node_file,
)
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle.export_drop import (
    DroppedExport,
    drop_export,
    recorded_at,
    update_lakehouse_def,
)
from trinityfs.lifecycle.lease import Lease
from trinityfs.lifecycle.mark import DEFAULT_THREADS, Marker, read_reused
from trinityfs.storage import Storage
from trinityfs.storage.missing import first_missing
from trinityfs.storage.settle import create_settled
from trinityfs.tree import Node
from trinityfs.txn.engine import Engine
from trinityfs.txn.snapshot import Snapshot

log = logging.getLogger(__name__)

MODES = ("minimal", "partial", "full")
SOURCE_VERSION_PROPERTY = "trinityfs.export.source-version"


@dataclass
class ExportProgress:
    """Where a running export is: `phase` is "nodes", "definitions", "root" or "done".

    `files_total` is None while the tree walk is still discovering nodes.
    """

    name: str
    phase: str
    files_done: int
    files_total: int | None
    bytes_done: int


ProgressCallback = Callable[[ExportProgress], None]


@dataclass
class ExportInfo:
    """One export: its name, the location of its root, and the version it pins."""

    name: str
    location: str
    standalone: bool  # a full export (its own directory)
    version: int | None
    created_at_millis: int | None = None
    mode: str | None = None  # known when just created; listing tells only standalone or not
    files_written: int = 0
    bytes_written: int = 0
    problem: str | None = None  # why the export's root could not be read (listing)

    def to_dict(self) -> dict:
        return asdict(self)


# -- locating and reading an export --------------------------------------------------


def export_storage(storage: Storage, location: str) -> tuple[Storage, str]:
    """The storage the export root at `location` resolves against, and the root's name.

    Pointers in a root resolve relative to the directory of the root file: for a full
    export that is ``_exports/<name>/``, for the others the lakehouse root.
    """
    directory, _, name = location.rpartition("/")
    if not directory:
        return storage, location
    return storage.child(directory), name


def export_root_version(root_name: str, root: Node | NodeFile) -> int:
    """The version an export root pins: from its file name, else from previous_root."""
    version = parse_root_node_file(root_name)
    if version is not None:
        return version
    previous = root.system.get(KEY_PREVIOUS_ROOT)
    if previous is None:
        return 0
    before = parse_root_node_file(previous)
    return 0 if before is None else before + 1


def open_export(engine: Engine, name: str) -> tuple[Snapshot, Storage]:
    """The snapshot of export `name` and the storage its pointers resolve against."""
    location = engine.snapshot().lakehouse_def.exported_snapshots.get(name)
    if location is None:
        raise VersionNotFoundError(f"no export named {name!r} in {engine.storage.url}")
    storage, root_name = export_storage(engine.storage, location)
    sub = engine if storage is engine.storage else Engine(storage)
    try:
        data = read_reused(storage, root_name) if storage is engine.storage else None
        root = (
            sub.roots.load_location(root_name)
            if data is None
            else Node.from_file(decode_node(data, None, root_name), root_name)
        )
    except StorageFileNotFoundError:
        raise VersionNotFoundError(
            f"export {name!r} is recorded at {location} but its root node file is missing"
        ) from None
    return sub.snapshot_of_root(export_root_version(root_name, root), root), storage


def list_exports(engine: Engine) -> list[ExportInfo]:
    """Every export recorded in the latest LakehouseDef, by name."""
    out = []
    records = engine.snapshot().lakehouse_def.exported_snapshots
    for name in sorted(records):
        location = records[name]
        info = ExportInfo(name, location, "/" in location, None)
        try:
            storage, root_name = export_storage(engine.storage, location)
            data = (
                read_reused(storage, root_name)
                if storage is engine.storage
                else storage.read_immutable(root_name)
            )
            nf = decode_node(data, None, root_name)
            info.version = export_root_version(root_name, nf)
            info.created_at_millis = int(nf.system.get(KEY_CREATED_AT_MILLIS, "0"))
        except Exception as exc:  # listing reports a broken export instead of failing
            info.problem = f"{type(exc).__name__}: {exc}"
        out.append(info)
    return out


# -- recording ------------------------------------------------------------------------


def _record(engine: Engine, name: str, location: str) -> None:
    def add(ldef: LakehouseDef) -> bool:
        if name in ldef.exported_snapshots:
            raise AlreadyExistsError(f"export {name!r} already exists")
        ldef.exported_snapshots[name] = location
        return True

    update_lakehouse_def(engine, add)


# -- creating -------------------------------------------------------------------------


class _Progress:
    """Thread-safe counters that report to the caller's callback, one call at a time."""

    def __init__(
        self,
        name: str,
        callback: ProgressCallback | None,
        tick: Callable[[], None] | None = None,
    ):
        self.name = name
        self.callback = callback
        self.tick = tick  # called after every file written (renews the export's lease)
        self.lock = threading.Lock()
        self.files = 0
        self.bytes = 0
        self.total: int | None = None
        self.phase = "nodes"

    def touch(self) -> None:
        """Renew the export's lease when due (TransactionExpiredError once it lapsed)."""
        if self.tick is not None:
            self.tick()

    def add(self, nbytes: int) -> None:
        with self.lock:
            self.files += 1
            self.bytes += nbytes
            self._report()
        self.touch()

    def set(self, phase: str, total: int | None) -> None:
        with self.lock:
            self.phase, self.total = phase, total
            self._report()

    def _report(self) -> None:
        if self.callback is not None:
            self.callback(ExportProgress(self.name, self.phase, self.files, self.total, self.bytes))


def create_export(
    engine: Engine,
    name: str,
    version: int | None = None,
    mode: str = "minimal",
    depth: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    threads: int = DEFAULT_THREADS,
) -> ExportInfo:
    """Export `version` (latest when None) under `name`; returns what was written."""
    if mode not in MODES:
        raise InvalidArgumentError(f"unknown export mode {mode!r}; expected one of {MODES}")
    if depth is not None and mode != "partial":
        raise InvalidArgumentError("depth applies to partial exports only")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise InvalidArgumentError(f"export depth must be an int >= 0, got {depth!r}")
    export_root_location(name)  # validates the name (it becomes part of file names)
    latest = engine.snapshot()
    if name in latest.lakehouse_def.exported_snapshots:
        raise AlreadyExistsError(f"export {name!r} already exists")
    if version is None:
        version = latest.version
    if version < engine.roots.oldest_version():
        raise VersionNotFoundError(f"version {version} was expired and cannot be exported")
    # files nothing references until the record lands: held against expiration
    leased = mode == "full" or (mode == "partial" and depth != 0)
    lease = Lease(engine, "export") if leased else None
    try:
        return _export(engine, name, version, mode, depth, progress, threads, lease)
    finally:
        if lease is not None:
            lease.drop()


def _export(
    engine: Engine,
    name: str,
    version: int,
    mode: str,
    depth: int | None,
    progress: ProgressCallback | None,
    threads: int,
    lease: Lease | None,
) -> ExportInfo:
    """`create_export` once its arguments are checked (and its lease taken)."""
    report = _Progress(name, progress, None if lease is None else lease.renew)
    written: list[str] = []  # what to remove if the record cannot be committed
    root_bytes: list[bytes] = []  # minimal/partial: the root copy, to put back
    try:
        if mode == "full":
            info = _full(engine, name, version, report, threads, written)
        else:
            levels = 0 if mode == "minimal" else (1 if depth is None else depth)
            info = _copy_root(engine, name, version, levels, report, threads, written, root_bytes)
    except AmbiguousWriteError:
        raise  # a root may have landed: left for drop_export or expiration, as after a crash
    except BaseException:  # no record: what this export wrote is of no use to anyone
        _remove_quietly(engine.storage, written)
        raise
    info.mode = mode
    try:
        if lease is not None:
            lease.renew(force=True)  # lapsed or gone: what it held may be swept
        _record(engine, name, info.location)
    except AmbiguousWriteError as exc:
        # The record may have landed: its files must stay. If it did not, they are
        # leftovers that drop_export (or expiration, once old) removes, as after a crash.
        raise AmbiguousWriteError(
            f"whether export {name!r} was recorded is unknown ({exc}); its files are kept: "
            f"exports() tells whether it exists, drop_export({name!r}) removes it"
        ) from exc
    except BaseException:
        _remove_quietly(engine.storage, written)
        raise
    _check_files_kept(engine, name, info, written, root_bytes)
    if not info.standalone and engine.roots.oldest_version() > version:
        # Expiration writes the marker before it deletes anything. A marker above the
        # version after the record landed means an expiration that may not have seen
        # the record yet may have swept nodes the export shares with that version:
        # give the export up rather than keep one that might not read.
        drop_export(engine, name)
        raise VersionNotFoundError(
            f"version {version} was expired while it was being exported as {name!r}"
        )
    report.set("done", report.files)
    return info


def _copy_root(
    engine: Engine,
    name: str,
    version: int,
    depth: int,
    report: _Progress,
    threads: int,
    written: list[str],
    root_bytes: list[bytes],
) -> ExportInfo:
    storage = engine.storage
    target = export_root_location(name)
    source = root_node_file(version)
    try:
        data = storage.read(source)
    except StorageFileNotFoundError:
        raise VersionNotFoundError(f"version {version} does not exist") from None
    root = decode_node(data, None, source)
    order = _lakehouse_def_of(storage, root).order
    copies: list[tuple[str, bytes]] = []
    if depth > 0 and root.children is not None:
        nodes = engine.nodes(order)

        def copy(ref: str, level: int) -> str:
            report.touch()  # reading may take long before anything is written
            node = nodes.load(ref)
            if node.is_leaf or level > depth:
                return ref
            nf = node.to_file()
            nf.children = [copy(c, level + 1) for c in nf.children]
            node_bytes = encode_node(nf, order)
            location = new_node_location(node_bytes)
            copies.append((location, node_bytes))
            return location

        root.children = [copy(c, 1) for c in root.children]
        data = encode_node(root, order)
    report.set("nodes", len(copies) + 1)
    written.extend(loc for loc, _ in copies)
    _write_all(storage, copies, report, threads)
    report.set("root", len(copies) + 1)
    if not create_settled(storage, target, data, f"the root of export {name!r}"):
        raise AlreadyExistsError(
            f"{target} already exists (another export of that name is being written, or "
            f"an earlier one crashed: drop_export({name!r}) removes it)"
        )
    written.append(target)
    root_bytes.append(data)
    report.add(len(data))
    return ExportInfo(
        name,
        target,
        False,
        version,
        root.created_at_millis,
        files_written=len(copies) + 1,
        bytes_written=report.bytes,
    )


def _full(
    engine: Engine,
    name: str,
    version: int,
    report: _Progress,
    threads: int,
    written: list[str],
) -> ExportInfo:
    """Copy version `version` into `_exports/<name>/`; `written` receives every file
    written there (relative to the lakehouse), the claim first."""
    storage = engine.storage
    prefix = full_export_prefix(name)
    target = storage.child(prefix)
    root_name = root_node_file(version)
    try:
        data = storage.read(root_name)
    except StorageFileNotFoundError:
        raise VersionNotFoundError(f"version {version} does not exist") from None
    # Claim the directory first: one export per name writes into it.
    marker_bytes = str(version).encode()
    if not create_settled(target, OLDEST_VERSION, marker_bytes, f"the claim of export {name!r}"):
        raise AlreadyExistsError(
            f"{prefix} is already in use (another export of that name is being written, "
            f"or an earlier one crashed: drop_export({name!r}) removes it)"
        )
    written.append(prefix + OLDEST_VERSION)
    root = decode_node(data, None, root_name)
    lock = threading.Lock()

    def wrote(location: str) -> None:
        with lock:
            written.append(prefix + location)

    def copy_node(location: str, content: bytes, _nf: NodeFile) -> None:
        target.write(location, content)
        wrote(location)
        report.add(len(content))

    marker = Marker(storage, threads=threads, on_node=copy_node)
    marker.mark_loaded(root_name, root)  # copies every node while walking the tree
    definitions = sorted(marker.definitions)
    report.set("definitions", len(marker.nodes) + len(definitions) + 2)

    def copy_file(location: str) -> int:
        content = storage.read(location)
        check_file_bytes(location, content)  # never copy rot into a backup
        target.write(location, content)
        wrote(location)
        return len(content)

    if definitions:
        with ThreadPoolExecutor(max_workers=min(threads, len(definitions))) as pool:
            for future in as_completed([pool.submit(copy_file, d) for d in definitions]):
                report.add(future.result())
    report.set("root", report.total)
    ldef = _lakehouse_def_of(storage, root)
    order = ldef.order
    ldef.exported_snapshots.clear()
    ldef.properties[SOURCE_VERSION_PROPERTY] = str(version)
    ldef_bytes = encode_definition(ldef)
    new_ldef_location = new_lakehouse_def_location(ldef_bytes)
    target.write(new_ldef_location, ldef_bytes)
    wrote(new_ldef_location)
    report.add(len(ldef_bytes))
    root.system[KEY_LAKEHOUSE_DEF] = new_ldef_location
    root_bytes = encode_node(root, order)
    target.write(LATEST_HINT, marker_bytes)
    wrote(LATEST_HINT)
    if not create_settled(target, root_name, root_bytes, f"the root of export {name!r}"):
        raise AlreadyExistsError(f"{prefix}{root_name} was created by another export meanwhile")
    wrote(root_name)
    report.add(len(root_bytes))
    return ExportInfo(
        name,
        prefix + root_name,
        True,
        version,
        root.created_at_millis,
        files_written=report.files,
        bytes_written=report.bytes,
    )


def _lakehouse_def_of(storage: Storage, root: NodeFile) -> LakehouseDef:
    """A private copy of the LakehouseDef a root points to."""
    location = root.system[KEY_LAKEHOUSE_DEF]
    return decode_lakehouse_def(storage.read_immutable(location), location)


def _write_all(
    storage: Storage, files: list[tuple[str, bytes]], report: _Progress, threads: int
) -> None:
    if not files:
        return
    with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
        futures = {
            pool.submit(storage.write_immutable, loc, data): len(data) for loc, data in files
        }
        for future in as_completed(futures):
            future.result()
            report.add(futures[future])


# -- after the record landed -----------------------------------------------------------


def _check_files_kept(
    engine: Engine, name: str, info: ExportInfo, written: list[str], root_bytes: list[bytes]
) -> None:
    """Never acknowledge a recorded export whose files are gone.

    A drop_export of the same name that ran between our files and our record found no
    record and may have deleted them. A missing root copy is put back from the bytes
    this export holds (its private node copies are never deleted by a drop); a full
    export missing any file it wrote has its record removed again and fails. Nothing is
    done when the record is no longer ours (a drop that came after the record).
    """
    storage = engine.storage
    try:
        if info.standalone:
            listed = {e.location for e in storage.list(full_export_prefix(name))}
            missing = [loc for loc in written[1:] + written[:1] if loc not in listed]
        else:  # the root copy, then a partial export's private node copies
            missing = [] if storage.exists(info.location) else [info.location]
            gone = first_missing(storage, [loc for loc in written if loc != info.location])
            missing += [gone] if gone is not None else []
        if not missing or not recorded_at(engine, name, info.location):
            return
    except TrinityError as exc:  # the record landed: never report it as failed
        log.warning("export %r is recorded; checking its files failed (%s): run fsck", name, exc)
        return
    if root_bytes and missing == [info.location]:  # a drop took it: put it back
        create_settled(storage, info.location, root_bytes[0], f"the root of export {name!r}")
        return

    def undo(ldef: LakehouseDef) -> bool:
        if ldef.exported_snapshots.get(name) != info.location:
            return False
        del ldef.exported_snapshots[name]
        return True

    lost = (
        f"export {name!r} lost {len(missing)} of the {len(written)} files it wrote while it "
        f"was being recorded (first {missing[0]}; a drop_export({name!r}) or an "
        f"expiration in another process?)"
    )
    try:
        update_lakehouse_def(engine, undo)
    except TrinityError as exc:
        raise StorageFileNotFoundError(
            missing[0],
            f"{lost}, and removing its record again failed ({exc}): drop_export({name!r}) "
            f"removes it",
        ) from exc
    raise StorageFileNotFoundError(
        missing[0],
        f"{lost}: its record was removed again, nothing was exported; what is left is "
        f"removed by drop_export({name!r}) once older than the commit window, or by "
        f"expiration",
    )


def _remove_quietly(storage: Storage, written: list[str]) -> None:
    """Best effort cleanup of the files an export wrote but could not record.

    Only what this export wrote, newest first (a full export's root first, its claim
    last): a concurrent export of the same name in the other layout (which may be the
    one that won the record) is left alone.
    """
    try:
        for location in reversed(written):
            storage.delete(location)
    except Exception:  # expiration reclaims whatever is left once it is old enough
        pass


__all__ = [
    "DroppedExport",
    "ExportInfo",
    "ExportProgress",
    "create_export",
    "drop_export",
    "export_root_version",
    "export_storage",
    "list_exports",
    "open_export",
    "update_lakehouse_def",
]
