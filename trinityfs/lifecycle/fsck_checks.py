"""The checks fsck runs on what it marked: lakehouse definitions, tree invariants,
definition files (present, decodable as their key's type, owned by their key) and
exports (trinityfs/lifecycle/fsck.py runs them; findings go to the report)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from google.protobuf.message import Message

from trinityfs.errors import StorageFileNotFoundError, TreeInvariantError, TrinityError
from trinityfs.format.definitions import (
    NamespaceDef,
    TableDef,
    ViewDef,
    buffer_budget_bytes,
    decode_definition,
    validate_lakehouse_def,
)
from trinityfs.format.keys import (
    KEY_LAKEHOUSE_DEF,
    TYPE_NAMESPACE,
    TYPE_TABLE,
    TYPE_VIEW,
    KeyCodec,
    ObjectKey,
    decode_type_id,
)
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import definition_owner_problem
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle.exports import export_root_version, export_storage
from trinityfs.lifecycle.fsck_report import FsckProblem, FsckReport
from trinityfs.lifecycle.gc import LiveSet
from trinityfs.lifecycle.inventory import Inventory
from trinityfs.lifecycle.mark import Marker
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore, check_tree
from trinityfs.txn.engine import Engine

_DEFINITION_TYPES: dict[int, type[Message]] = {
    TYPE_NAMESPACE: NamespaceDef,
    TYPE_TABLE: TableDef,
    TYPE_VIEW: ViewDef,
}


def lakehouse_def(
    storage: Storage,
    root: NodeFile,
    cache: dict[str, LakehouseDef | None],
    report: FsckReport,
    version: int | None,
) -> LakehouseDef | None:
    location = root.system.get(KEY_LAKEHOUSE_DEF)
    if location is None:
        report.error("corrupt", "", "root has no lakehouse_def row", version)
        return None
    if location not in cache:
        try:
            storage.forget(location)  # the stored file, not what this process read once
            ldef = decode_definition(storage.read_immutable(location), LakehouseDef, location)
            cache[location] = validate_lakehouse_def(ldef)
        except TrinityError as exc:
            report.error(
                "corrupt" if not isinstance(exc, StorageFileNotFoundError) else "missing",
                location,
                f"lakehouse definition: {exc}",
                version,
            )
            cache[location] = None
    return cache[location]


def check_tree_of(
    store: NodeStore,
    nf: NodeFile,
    location: str,
    ldef: LakehouseDef,
    version: int,
    report: FsckReport,
) -> None:
    try:
        check_tree(
            store,
            Node.from_file(nf, location),
            order=ldef.order,
            budget=buffer_budget_bytes(ldef),
            version=version,
        )
    except TreeInvariantError as exc:
        for problem in exc.problems:
            report.error("tree", location, problem, version)
    except TrinityError as exc:
        report.error("tree", location, str(exc), version)


def check_definitions(
    storage: Storage,
    prefix: str,
    marker: Marker,
    keys_of: dict[str, set[str]],
    inventory: Inventory,
    report: FsckReport,
    threads: int,
    codec: KeyCodec | None = None,
) -> None:
    """Every definition pointer resolves (in the listing), decodes as its key's type and
    (with `codec`) names a file of its key's object (`definition_owner_problem`)."""
    present = []
    for location in sorted(marker.definitions):
        if prefix + location in inventory:
            present.append(location)
            continue
        referrer = f"{prefix}{marker.referrer(location) or '?'}"
        odd = look_again(storage, location)
        if odd is None:  # written since the listing (a commit that landed meanwhile)
            present.append(location)
        elif odd == MISSING:
            report.error(
                "missing", prefix + location, f"definition referenced by {referrer} is missing"
            )
        else:
            report.error(
                "corrupt", prefix + location, f"definition referenced by {referrer}: {odd}"
            )

    def check(location: str) -> FsckProblem | None:
        kinds = set()
        for key in sorted(keys_of.get(location, ())):
            try:
                kinds.add(decode_type_id(key[:4]))
                owner = codec.decode(key) if codec is not None else None
            except TrinityError:
                return FsckProblem("corrupt", prefix + location, f"points from bad key {key!r}")
            problem = owner and definition_owner_problem(
                location, owner.kind, owner.namespace, owner.name
            )
            if problem:
                why = f"pointed to by the key of {_named(owner)}: {problem}"
                return FsckProblem("corrupt", prefix + location, why)
        try:
            data = storage.read(location)
        except StorageFileNotFoundError:  # removed after the listing that found it
            return FsckProblem("missing", prefix + location, "definition file is missing")
        except TrinityError as exc:
            return FsckProblem("corrupt", prefix + location, str(exc))
        try:
            for kind in kinds:
                cls = _DEFINITION_TYPES.get(kind)
                if cls is None:
                    return FsckProblem(
                        "corrupt", prefix + location, f"key type {kind} has no definition type"
                    )
                decode_definition(data, cls, prefix + location)
        except TrinityError as exc:
            return FsckProblem("corrupt", prefix + location, str(exc))
        return None

    if present:
        with ThreadPoolExecutor(max_workers=min(threads, len(present))) as pool:
            for problem in pool.map(check, present):
                if problem is not None:
                    report.errors.append(problem)
    report.definitions_checked += len(present)


def check_export(
    engine: Engine,
    name: str,
    location: str,
    inventory: Inventory,
    live: LiveSet,
    report: FsckReport,
    threads: int,
    latest: int,
) -> None:
    """Export `name` (recorded at `location` by version `latest`), read like a version."""
    report.exports_checked.append(name)
    storage, root_name = export_storage(engine.storage, location)
    directory = location.rpartition("/")[0]
    if directory:
        live.export_dirs.add(directory)
        prefix = directory + "/"
        keys_of: dict[str, set[str]] = {}

        def remember_keys(_loc: str, _data: bytes, nf: NodeFile) -> None:
            add_keys_of(keys_of, nf)

        marker = Marker(
            storage, threads=threads, strict=False, on_node=remember_keys, uncached=True
        )
    else:
        live.export_roots.add(location)
        prefix = ""
        marker = live.marker
        keys_of = {}
    odd = None if location in inventory else look_again(engine.storage, location)
    if odd == MISSING:
        odd = _gone_or_dropped(engine, name, location, report)
        if odd == DROPPED:
            return
    if odd is not None:
        report.error("export", location, f"export {name!r}: root node file {odd}")
        return

    ours = {location, root_name}  # how a marker names the root (full exports: inside)

    def read_root() -> NodeFile | None:
        if directory:
            return marker.mark_root(root_name)
        return marker.mark_reread(location, referrer=f"export {name}")

    try:
        nf = read_root()
        gone = nf is None and look_again(engine.storage, location) == MISSING
        # listed, then gone when read: dropped (and maybe created again) meanwhile?
        if gone and _gone_or_dropped(engine, name, location, report) == DROPPED:
            marker.missing = [(loc, by) for loc, by in marker.missing if loc not in ours]
            return
        if nf is None and look_again(engine.storage, location) is None:
            nf = read_root()  # there again: created again under its name; read it once more
            if nf is not None:  # the first read's "missing" was the moment between
                marker.missing = [(loc, by) for loc, by in marker.missing if loc not in ours]
    except TrinityError as exc:
        report.error("export", location, f"export {name!r}: {exc}")
        return
    if nf is None:
        report.error("export", location, f"export {name!r}: root unreadable")
        return
    version = export_root_version(root_name, nf)
    ldef = lakehouse_def(storage, nf, {}, report, version)
    if ldef is None:
        return
    check_tree_of(NodeStore(storage, ldef.order), nf, location, ldef, version, report)
    if directory:
        for loc, referrer in marker.missing:
            report.error(
                "missing",
                prefix + loc,
                f"export {name!r}: referenced by {prefix}{referrer or '?'} but missing",
            )
        for loc, _referrer, message in marker.problems:
            report.error("corrupt", prefix + loc, f"export {name!r}: {message}")
        check_definitions(storage, prefix, marker, keys_of, inventory, report, threads)


def add_keys_of(keys_of: dict[str, set[str]], nf: NodeFile) -> None:
    """Record, for each definition location a node file points to, the keys naming it
    (rows and buffered messages): fsck attributes a bad definition to its objects."""
    for key, value in zip(nf.keys, nf.values, strict=True):
        keys_of.setdefault(value, set()).add(key)
    for key, value, _txn in nf.buffer:
        if value is not None:
            keys_of.setdefault(value, set()).add(key)


def _named(key: ObjectKey) -> str:
    """`ns` or `ns.name`, with the kind: how messages name an object."""
    return f"{key.kind} {key.namespace}" + ("" if key.name is None else f".{key.name}")


#: `_gone_or_dropped`'s answer when the export's record no longer names the root
DROPPED = "dropped"
#: looks at a missing export root and its record, a short wait apart
GONE_LOOKS = (0.0, 0.05, 0.2)


def _gone_or_dropped(engine: Engine, name: str, location: str, report: FsckReport) -> str | None:
    """For export `name`'s root at `location`, found missing: DROPPED (said as a
    "changed" warning) when the latest version's record no longer names it (a drop
    removes the record first, then the files); None when the root is there again (a
    create under the name writes its files first, then the record); MISSING when the
    record still names it and the file stays gone (looked at a few times): an error,
    whatever else commits meanwhile."""
    for wait in GONE_LOOKS:
        time.sleep(wait)
        if look_again(engine.storage, location) != MISSING:
            return None
        latest = engine.roots.latest_from_markers()
        if engine.snapshot(latest).lakehouse_def.exported_snapshots.get(name) != location:
            report.warn(
                "changed",
                location,
                f"export {name!r}: its root node file is gone and version {latest} no "
                f"longer records it there (dropped meanwhile)",
            )
            return DROPPED
    return MISSING


#: `look_again`'s answer for a file that is not there
MISSING = "is missing"


def look_again(storage: Storage, location: str) -> str | None:
    """A file the listing did not show, looked at again: None when it is there now (a
    regular file, written since the listing), MISSING, or why readers refuse it (a
    symbolic link, a directory, on the path or at the name: listings skip them)."""
    try:
        if storage.read_if_regular(location) is None:
            return "is a symbolic link or not a regular file: readers refuse it"
    except StorageFileNotFoundError:
        return MISSING
    except TrinityError as exc:
        return f"cannot be read: {exc}"
    return None
