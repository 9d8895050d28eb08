"""fsck of a whole lakehouse: versions, exports, transactions and orphans.

Checks, collecting every problem instead of stopping at the first:

- the markers: ``_oldest_version.txt`` and ``_latest_hint.txt`` readable, the hint not
  beyond the latest version;
- every kept version (oldest marker .. latest): its root exists (no gap), decodes, its
  LakehouseDef is readable and valid, its ``previous_root`` exists (except for the
  oldest kept version, whose predecessor was expired), and its tree passes
  `trinityfs.tree.check_tree` (order, balance, key ranges, buffers);
- every pointer resolves inside the root: child nodes, definition files (each read and
  decoded as the type its key says), lakehouse definitions (locations that would leave
  the root are already refused when a node file is decoded);
- every file read is verified (content hash in its name, rows checksum in node files;
  docs/FORMAT-CHOICES.md "Integrity"), and each missing or corrupt file is reported with
  every kept version that reaches it (`versions`, and `affected_versions` per version);
  files too old to carry a hash or checksum are counted in `unverified_files`;
- every export recorded in the latest LakehouseDef, read like a version (against its
  own directory for a full export), with the same checks;
- every distributed transaction file: readable, its base version still kept while it
  is not expired, its running root readable;
- orphans: format files that no kept version, export or unexpired transaction reaches,
  with their sizes (expiration removes them once older than the grace period), and
  unknown files (never touched by trinityfs).

`ok` is False when any error was found; orphans and warnings do not make a lakehouse
unhealthy. `FsckReport.to_dict()` is the machine-readable form; `exit_status` is 0
(healthy) or 1 (errors) for scripts.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from google.protobuf.message import Message

from trinityfs.errors import (
    CorruptFileError,
    LakehouseNotFoundError,
    StorageFileNotFoundError,
    SymlinkInRootError,
    TreeInvariantError,
    TrinityError,
)
from trinityfs.format.definitions import (
    NamespaceDef,
    TableDef,
    ViewDef,
    buffer_budget_bytes,
    decode_definition,
    validate_lakehouse_def,
)
from trinityfs.format.integrity import ROWS_DIGEST_KEY, has_content_name
from trinityfs.format.keys import (
    KEY_LAKEHOUSE_DEF,
    KEY_PREVIOUS_ROOT,
    TYPE_NAMESPACE,
    TYPE_TABLE,
    TYPE_VIEW,
    KeyCodec,
    ObjectKey,
    decode_type_id,
)
from trinityfs.format.node_decode import decode_node
from trinityfs.format.nodefile import NodeFile
from trinityfs.format.paths import (
    definition_owner_problem,
    parse_root_node_file,
    root_node_file,
)
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.lifecycle.exports import export_root_version, export_storage
from trinityfs.lifecycle.gc import LiveSet, find_unreachable, scan_transactions
from trinityfs.lifecycle.inventory import Inventory, StoredFile
from trinityfs.lifecycle.mark import DEFAULT_THREADS, Marker
from trinityfs.lifecycle.markers import assess, latest_by_listing, oldest_marker_damaged
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore, check_tree
from trinityfs.txn.engine import Engine, now_millis

_DEFINITION_TYPES: dict[int, type[Message]] = {
    TYPE_NAMESPACE: NamespaceDef,
    TYPE_TABLE: TableDef,
    TYPE_VIEW: ViewDef,
}


@dataclass(frozen=True)
class FsckProblem:
    kind: str  # missing, corrupt, tree, gap, marker, export, transaction, ...
    location: str
    message: str
    version: int | None = None
    versions: tuple[int, ...] = ()  # every kept version that reaches the file

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "location": self.location,
            "message": self.message,
            "version": self.version,
            "versions": list(self.versions),
        }


@dataclass
class FsckReport:
    url: str
    oldest_version: int | None = None
    latest_version: int | None = None
    versions_checked: int = 0
    exports_checked: list[str] = field(default_factory=list)
    transactions: list[dict] = field(default_factory=list)
    nodes_checked: int = 0
    definitions_checked: int = 0
    unverified_files: int = 0
    affected_versions: dict[int, list[str]] = field(default_factory=dict)
    errors: list[FsckProblem] = field(default_factory=list)
    warnings: list[FsckProblem] = field(default_factory=list)
    orphans: list[StoredFile] = field(default_factory=list)
    unknown_files: list[StoredFile] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def exit_status(self) -> int:
        return 0 if self.ok else 1

    @property
    def orphan_bytes(self) -> int:
        return sum(f.size for f in self.orphans)

    def error(self, kind: str, location: str, message: str, version: int | None = None) -> None:
        self.errors.append(FsckProblem(kind, location, message, version))

    def warn(self, kind: str, location: str, message: str, version: int | None = None) -> None:
        self.warnings.append(FsckProblem(kind, location, message, version))

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "ok": self.ok,
            "oldest_version": self.oldest_version,
            "latest_version": self.latest_version,
            "versions_checked": self.versions_checked,
            "exports_checked": self.exports_checked,
            "transactions": self.transactions,
            "nodes_checked": self.nodes_checked,
            "definitions_checked": self.definitions_checked,
            "unverified_files": self.unverified_files,
            "affected_versions": {str(v): locs for v, locs in self.affected_versions.items()},
            "errors": [p.to_dict() for p in self.errors],
            "warnings": [p.to_dict() for p in self.warnings],
            "orphans": [f.to_dict() for f in self.orphans],
            "orphan_bytes": self.orphan_bytes,
            "unknown_files": [f.to_dict() for f in self.unknown_files],
            "requests": self.requests,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


def fsck(engine: Engine, *, threads: int = DEFAULT_THREADS) -> FsckReport:
    """Check the whole lakehouse; never raises for what it finds (see the report).

    A check that finds errors runs once more and reports as errors only those found
    both times: the lakehouse may change while it is checked (an expiration deleting
    the versions it passes, an export dropped, a commit landing), and what is seen in
    one pass only is a warning (kind "changed"), never an error. A healthy lakehouse is
    checked once.
    """
    storage = engine.storage
    before = storage.stats.snapshot()
    started = time.perf_counter()
    report = _one_pass(engine, threads)
    if report.errors:
        report = _confirmed(report, _one_pass(engine, threads))
    after = storage.stats.snapshot()
    report.requests = {k: after[k] - before[k] for k in after}
    report.elapsed_seconds = time.perf_counter() - started
    return report


def _one_pass(engine: Engine, threads: int) -> FsckReport:
    report = FsckReport(engine.storage.url)
    _fsck(engine, report, threads)
    return report


def _confirmed(first: FsckReport, second: FsckReport) -> FsckReport:
    """`second` with the errors both passes found; the others become warnings."""
    seen_first = {(p.kind, p.location) for p in first.errors}
    kept = [p for p in second.errors if (p.kind, p.location) in seen_first]
    kept_keys = {(p.kind, p.location) for p in kept}
    once = [p for p in (*first.errors, *second.errors) if (p.kind, p.location) not in kept_keys]
    for problem in dict.fromkeys(once):
        second.warn(
            "changed",
            problem.location,
            f"seen in one of two passes only (the lakehouse changed while it was checked: "
            f"an expiration, an export dropped or a commit): {problem.kind}: {problem.message}",
            problem.version,
        )
    second.errors = kept
    locations = {p.location for p in kept}
    second.affected_versions = {
        v: [loc for loc in locs if loc in locations]
        for v, locs in second.affected_versions.items()
        if any(loc in locations for loc in locs)
    }
    return second


def _fsck(engine: Engine, report: FsckReport, threads: int) -> None:
    storage = engine.storage
    now = now_millis()
    inventory = Inventory.scan(storage)
    try:
        latest = engine.roots.latest_version()
        oldest = engine.roots.oldest_version()  # checked against the roots
    except LakehouseNotFoundError as exc:
        report.error("missing", "", str(exc))
        return
    except (CorruptFileError, SymlinkInRootError):
        if not oldest_marker_damaged(storage):
            raise
        # readers refuse a malformed oldest marker (assess reports it, with the repair);
        # everything else is still checked, from the roots listed
        latest = latest_by_listing(storage, inventory)
        oldest = None
    markers = assess(storage, inventory, latest)
    for severity, location, message in markers.problems:
        (report.error if severity == "error" else report.warn)("marker", location, message)
    if oldest is None:
        oldest = markers.oldest
    report.oldest_version, report.latest_version = oldest, latest
    roots = inventory.roots()
    for version in sorted(v for v in roots if v > latest):
        report.warn(
            "gap",
            roots[version].location,
            f"root of version {version} lies beyond a missing version {latest + 1}",
        )

    # Reachability and pointers, for every kept version at once.
    keys_of: dict[str, set[str]] = {}
    refs: dict[str, list[str]] = {}  # node file -> every file it points to
    unverified: set[str] = set()

    def remember_keys(loc: str, data: bytes, nf: NodeFile) -> None:
        for key, value in zip(nf.keys, nf.values, strict=True):
            keys_of.setdefault(value, set()).add(key)
        for key, value, _txn in nf.buffer:
            if value is not None:
                keys_of.setdefault(value, set()).add(key)
        refs[loc] = _pointers(nf)
        if not has_content_name(loc) and ROWS_DIGEST_KEY not in data:
            unverified.add(loc)

    marker = Marker(storage, threads=threads, strict=False, on_node=remember_keys)
    kept = [root_node_file(v) for v in range(oldest, latest + 1)]
    loaded = marker.mark_roots(kept)
    live = LiveSet(marker, oldest, latest)

    # Each kept version: root, previous root, lakehouse definition, tree invariants.
    ldefs: dict[str, LakehouseDef | None] = {}
    stores: dict[int, NodeStore] = {}
    for version in range(oldest, latest + 1):
        location = root_node_file(version)
        nf = loaded.get(location)
        if nf is None:
            continue  # reported by the marker as missing or corrupt
        report.versions_checked += 1
        previous = nf.system.get(KEY_PREVIOUS_ROOT)
        if version > oldest and previous is not None and previous not in inventory:
            report.error(
                "missing", previous, f"previous_root of version {version} is missing", version
            )
        ldef = _lakehouse_def(storage, nf, ldefs, report, version)
        if ldef is None:
            continue
        store = stores.setdefault(ldef.order, NodeStore(storage, ldef.order))
        _check_tree(store, nf, location, ldef, version, report)

    # Exports recorded in the latest definition.
    latest_nf = loaded.get(root_node_file(latest))
    latest_ldef = ldefs.get(latest_nf.system.get(KEY_LAKEHOUSE_DEF, "")) if latest_nf else None
    records = latest_ldef.exported_snapshots if latest_ldef is not None else {}
    for name, location in sorted(records.items()):
        _check_export(engine, name, location, inventory, live, report, threads)

    # Distributed transactions.
    for txn in scan_transactions(storage, inventory, threads, strict=False):
        entry = {"location": txn.file.location, "id": None, "state": "unreadable"}
        report.transactions.append(entry)
        if txn.tdef is None:
            report.error("transaction", txn.file.location, txn.problem or "unreadable")
            continue
        entry["id"] = txn.tdef.id
        entry["expire_at_millis"] = txn.tdef.expire_at_millis
        if txn.tdef.expire_at_millis <= now:
            entry["state"] = "expired"
            report.warn(
                "transaction",
                txn.file.location,
                f"distributed transaction {txn.tdef.id} expired (expiration removes it)",
            )
            continue
        entry["state"] = "live"
        live.transaction_files.add(txn.file.location)
        base = txn.base_version
        if base is None or base < oldest or base > latest:
            report.error(
                "transaction",
                txn.file.location,
                f"distributed transaction {txn.tdef.id} begins at "
                f"{txn.tdef.beginning_root_node_file_path!r}, not a kept version",
            )
        running = txn.tdef.running_root_node_file_path
        if running and parse_root_node_file(running) is None:
            marker.mark_nodes([running], referrer=txn.file.location)

    # Pointers of the main lakehouse: nodes (walk) and definitions (read and decode).
    for location, referrer in marker.missing:
        version = parse_root_node_file(location)
        if version is not None:
            report.error(
                "missing",
                location,
                f"root of version {version} is missing: a gap "
                f"between the oldest ({oldest}) and latest ({latest}) version",
                version,
            )
        else:
            report.error("missing", location, f"referenced by {referrer or '?'} but missing")
    for location, referrer, message in marker.problems:
        version = parse_root_node_file(location)
        if version is not None:
            report.error("corrupt", location, f"root of version {version}: {message}", version)
        else:
            report.error("corrupt", location, f"{message} (referenced by {referrer or '?'})")
    for location in sorted(marker.lakehouse_defs - set(ldefs)):
        if location not in inventory:
            report.error(
                "missing",
                location,
                f"lakehouse definition referenced by {marker.referrer(location)} is missing",
            )
    report.nodes_checked = len(marker.nodes) + len(loaded)
    codec = KeyCodec.from_lakehouse_def(latest_ldef) if latest_ldef is not None else None
    _check_definitions(storage, "", marker, keys_of, inventory, report, threads, codec)
    unverified.update(
        loc for loc in marker.definitions | marker.lakehouse_defs if not has_content_name(loc)
    )
    report.unverified_files = len(unverified)
    _attribute_to_versions(report, refs, oldest, latest)

    # Orphans: every cutoff in the past, so nothing counts as too young to be one.
    sweep = find_unreachable(inventory, live, now, include_roots=True)
    report.orphans = sweep.garbage + sweep.young
    report.unknown_files = sweep.unknown


def _pointers(nf: NodeFile) -> list[str]:
    out = list(nf.children or ())
    out.extend(nf.values)
    out.extend(value for _key, value, _txn in nf.buffer if value is not None)
    if KEY_LAKEHOUSE_DEF in nf.system:
        out.append(nf.system[KEY_LAKEHOUSE_DEF])
    return out


def _attribute_to_versions(
    report: FsckReport, refs: dict[str, list[str]], oldest: int, latest: int
) -> None:
    """Name, for each missing or corrupt file, every kept version whose tree reaches it."""
    bad = {p.location for p in report.errors if p.kind in ("missing", "corrupt")}
    if not bad:
        return
    below: dict[str, frozenset[str]] = {}
    entered: set[str] = set()  # a ring of node files (a lie) is expanded once, not forever

    def bad_below(start: str) -> frozenset[str]:
        # iterative post-order over the DAG of node files (shared subtrees once)
        stack = [(start, False)]
        while stack:
            loc, expanded = stack.pop()
            if loc in below:
                continue
            targets = refs.get(loc, ())
            if not expanded:
                if loc in entered:
                    continue
                entered.add(loc)
                stack.append((loc, True))
                stack.extend((t, False) for t in targets if t in refs and t not in below)
                continue
            found = {loc} if loc in bad else set()
            for t in targets:
                found |= below.get(t, frozenset({t} & bad))
            below[loc] = frozenset(found)
        return below[start]

    reached: dict[str, list[int]] = {}
    for version in range(oldest, latest + 1):
        root = root_node_file(version)
        files = bad_below(root) if root in refs else frozenset({root} & bad)
        for loc in files:
            reached.setdefault(loc, []).append(version)
        if files:
            report.affected_versions[version] = sorted(files)
    report.errors = [
        replace(p, versions=tuple(reached.get(p.location, ()))) if p.location in reached else p
        for p in report.errors
    ]
    for p in report.errors:
        if p.version is not None and p.kind not in ("missing", "corrupt"):
            report.affected_versions.setdefault(p.version, []).append(p.location)


def _lakehouse_def(
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


def _check_tree(
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


def _check_definitions(
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
        odd = _not_a_file(storage, location)
        if odd is None:
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


def _check_export(
    engine: Engine,
    name: str,
    location: str,
    inventory: Inventory,
    live: LiveSet,
    report: FsckReport,
    threads: int,
) -> None:
    report.exports_checked.append(name)
    storage, root_name = export_storage(engine.storage, location)
    directory = location.rpartition("/")[0]
    if directory:
        live.export_dirs.add(directory)
        prefix = directory + "/"
        keys_of: dict[str, set[str]] = {}

        def remember_keys(_loc: str, _data: bytes, nf: NodeFile) -> None:
            for key, value in zip(nf.keys, nf.values, strict=True):
                keys_of.setdefault(value, set()).add(key)
            for key, value, _txn in nf.buffer:
                if value is not None:
                    keys_of.setdefault(value, set()).add(key)

        marker = Marker(storage, threads=threads, strict=False, on_node=remember_keys)
    else:
        live.export_roots.add(location)
        prefix = ""
        marker = live.marker
        keys_of = {}
    if location not in inventory:
        odd = _not_a_file(engine.storage, location)
        what = "is missing" if odd is None else f"cannot be read: {odd}"
        report.error("export", location, f"export {name!r}: root node file {what}")
        return
    try:
        if directory:
            nf = marker.mark_root(root_name)
        else:
            marker.mark_nodes([location], referrer=f"export {name}")
            nf = decode_node(storage.read_immutable(location), None, location)
    except TrinityError as exc:
        report.error("export", location, f"export {name!r}: {exc}")
        return
    if nf is None:
        report.error("export", location, f"export {name!r}: root unreadable")
        return
    version = export_root_version(root_name, nf)
    ldef = _lakehouse_def(storage, nf, {}, report, version)
    if ldef is None:
        return
    _check_tree(NodeStore(storage, ldef.order), nf, location, ldef, version, report)
    if directory:
        for loc, referrer in marker.missing:
            report.error(
                "missing",
                prefix + loc,
                f"export {name!r}: referenced by {prefix}{referrer or '?'} but missing",
            )
        for loc, _referrer, message in marker.problems:
            report.error("corrupt", prefix + loc, f"export {name!r}: {message}")
        _check_definitions(storage, prefix, marker, keys_of, inventory, report, threads)


def _named(key: ObjectKey) -> str:
    """`ns` or `ns.name`, with the kind: how messages name an object."""
    return f"{key.kind} {key.namespace}" + ("" if key.name is None else f".{key.name}")


def _not_a_file(storage: Storage, location: str) -> str | None:
    """Why a file the listing did not show is there anyway, but is no regular file (a
    symbolic link, a directory, on the path or at the name: listings skip them, readers
    refuse them), or None when it is simply missing (or appeared since the listing)."""
    try:
        if storage.read_if_regular(location) is None:
            return "is a symbolic link or not a regular file: readers refuse it"
    except StorageFileNotFoundError:
        return None
    except TrinityError as exc:
        return str(exc)
    return None
