"""The one place where root node files are built and created: the lakehouse's first
version, every commit (plain or distributed), every rollback, and the running roots
of distributed transactions.

Building: the copy-on-write tree writer applies the changes to the tree the root is
built on, writes the new nodes, and the system rows are set here (lakehouse_def,
previous_root, rollback_from_root, created_at_millis = max(now, previous + 1)).

Creating: create-if-absent with unknown outcomes settled by reading back
(`trinityfs.storage.settle`), then two checks that keep expiration from leaving a
dangling root (see trinityfs/lifecycle/expire.py):

- the new version must not lie below `_oldest_version.txt` (a create that succeeded
  only because expiration had deleted that root: the root is invisible, so it is
  removed and the commit refused);
- a root built on an *older* tree than the latest (a rollback's target, a distributed
  transaction's base) re-validates that tree against the oldest readable version right
  before the create and again right after: expiration writes the marker, then deletes
  the roots below it, then marks, then sweeps, so a source root still present after
  our root exists means expiration has not started marking and will see our root; a
  source root gone means it may not, and the commit is undone (a rollback) or refused.

Checks made before anything is written live in trinityfs/txn/verify.py
(`verify_before_writing`), batched existence checks in trinityfs/storage/missing.py
(`first_missing`); both names are still importable from here.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping

from trinityfs.errors import (
    AmbiguousWriteError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    CorruptFileError,
    StorageError,
    StorageFileNotFoundError,
    TransactionExpiredError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import decode_definition
from trinityfs.format.keys import (
    KEY_CREATED_AT_MILLIS,
    KEY_LAKEHOUSE_DEF,
    KEY_PREVIOUS_ROOT,
    KEY_ROLLBACK_FROM_ROOT,
    KeyCodec,
)
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import root_node_file
from trinityfs.format.trinitylake_pb2 import NamespaceDef, TableDef, ViewDef
from trinityfs.storage.missing import first_missing as first_missing  # moved there
from trinityfs.tree import Node, TreeWriter
from trinityfs.txn.backoff import BACKOFF_CAP_SECONDS
from trinityfs.txn.engine import Engine, diff_snapshots, now_millis
from trinityfs.txn.snapshot import Snapshot
from trinityfs.txn.verify import verify_before_writing as verify_before_writing  # moved there

log = logging.getLogger(__name__)

KEY_CREATED_AT = KEY_CREATED_AT_MILLIS  # the name trinityfs/catalog/bulk.py imports

#: An expiration's sweep issues each delete within this long (both clocks) of a look at
#: the latest version that found no root it had not marked (trinityfs/lifecycle/gc.py
#: `sweep_garbage`): a root that lands later is seen by the next look, or by the check
#: its committer makes once this long (and an allowance for requests in flight) passed.
SWEEP_DECISION_MILLIS = 2_000
#: system row of a root made by `undo`: the version it undid (readers ignore it)
UNDOES_ROW = "trinityfs_undoes"
#: how long after a late root landed its files are checked (again): that window and an
#: allowance for delete requests still in flight
LATE_RECHECK_SECONDS = SWEEP_DECISION_MILLIS / 1000 + 3.0


#: creates of the same root lost in a row, the latest version not reaching it, before
#: the commit gives up (RootBlockedError)
BLOCKED_LOSSES_MAX = 8
#: the first wait after such a loss; doubled after each one (up to BACKOFF_CAP_SECONDS)
BLOCKED_FIRST_WAIT_SECONDS = 0.02


class RootBlockedError(CommitRetriesExhaustedError):
    """Creating root `version` keeps failing as if another commit had created it, yet
    no reader finds that version: something that is not a readable root is at its
    name, or the store's conditional create disagrees with its reads."""

    def __init__(self, version: int, losses: int):
        self.version = version
        self.location = root_node_file(version)
        super().__init__(
            f"gave up on version {version}: creating its root {self.location} failed "
            f"{losses} times in a row as if another commit had created it, but the latest "
            f"version stays {version - 1} (something that is not a readable root is at "
            "that name, or the store's conditional create disagrees with its reads: check "
            "that file); nothing was committed"
        )


class BlockedRoot:
    """Lost creates of one root while the latest version stays below it. Each is
    followed by a wait, doubled each time and jittered (a winner whose root is not
    visible yet, or was removed again by its own below-the-oldest-marker check, is
    given time); after BLOCKED_LOSSES_MAX in a row, RootBlockedError names the root.
    A lost race whose winner is seen (the usual case) costs nothing here."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.losses = 0

    def lost(self, version: int, latest: int, deadline: float | None = None) -> None:
        """The create of root `version` lost and the latest version is now `latest`
        (`deadline`: a monotonic time no wait goes past)."""
        if latest >= version:
            self.version, self.losses = None, 0
            return
        self.losses = self.losses + 1 if self.version == version else 1
        self.version = version
        if self.losses >= BLOCKED_LOSSES_MAX:
            raise RootBlockedError(version, self.losses)
        delay = min(BACKOFF_CAP_SECONDS, BLOCKED_FIRST_WAIT_SECONDS * 2 ** (self.losses - 1))
        delay *= 0.5 + random.random() / 2
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - time.monotonic()))
        if delay > 0:
            _sleep(delay)


def _sleep(seconds: float) -> None:
    """The wait of `BlockedRoot` (tests replace it)."""
    time.sleep(seconds)


def build_root(
    engine: Engine,
    version: int,
    tree: Node,
    changes: Mapping[str, str | None],
    *,
    order: int,
    budget: int,
    lakehouse_def: str,
    previous: Snapshot | None,
    rollback_from: int | None = None,
    extra: Mapping[str, str] | None = None,
    compression: str | None = None,
    tree_version: int | None = None,
    written_out: list[str] | None = None,
) -> tuple[bytes, Node]:
    """Root of `version`: `tree` plus `changes`, its new nodes written (their locations
    appended to `written_out`); -> (bytes, root).

    With whole-tree verification (`verify="tree"`), every file `tree` (the tree of
    version `tree_version`, by default the previous one) reaches, the definitions in
    `changes` and `lakehouse_def` are verified first (trinityfs.txn.verify).
    """
    nodes = engine.nodes(order)
    if engine.tree_verifier is not None:
        if tree_version is None:
            tree_version = version - 1 if previous is None else previous.version
        engine.tree_verifier.verify(
            tree, nodes, lakehouse_def, version=tree_version, changes=changes
        )
    emitter = nodes.node_emitter(compression)  # a rebuild writes its nodes as it cuts them
    root = TreeWriter(nodes, order, budget, version, emit=emitter).commit(tree, changes)
    system = {KEY_LAKEHOUSE_DEF: lakehouse_def}
    created = now_millis()
    if previous is not None:
        system[KEY_PREVIOUS_ROOT] = root_node_file(previous.version)
        created = max(created, previous.created_at_millis + 1)
    if rollback_from is not None:
        system[KEY_ROLLBACK_FROM_ROOT] = root_node_file(rollback_from)
    system[KEY_CREATED_AT_MILLIS] = str(created)
    system.update(extra or {})
    root.system = system
    written = emitter.written + nodes.write_new_nodes(root, compression=compression)
    if written_out is not None:
        written_out.extend(written)
    if engine.tree_verifier is not None:
        engine.tree_verifier.remember_written(written)
    return encode_node(root.to_file(), order, compression=compression), root


def create_first(engine: Engine, lakehouse_def: str, order: int) -> bool:
    """Create version 0 (an empty tree); False when a lakehouse already exists."""
    root = Node.empty_leaf()
    root.system = {KEY_LAKEHOUSE_DEF: lakehouse_def, KEY_CREATED_AT_MILLIS: str(now_millis())}
    data = encode_node(root.to_file(), order)
    if not engine.roots.create(0, data):
        return False
    engine.roots.write_hint(0)
    return True


def check_source_kept(engine: Engine, version: int, what: str) -> None:
    """Refuse to build on version `version` once expiration has started removing it."""
    roots = engine.roots
    marker = roots.oldest_marker() or 0
    if version < marker and roots.marker_is_real(marker):
        raise VersionNotFoundError(
            f"{what}: version {version} was expired (the oldest readable version is "
            f"{marker}); nothing was committed"
        )
    if not roots.exists(version):
        raise VersionNotFoundError(f"{what}: version {version} was expired; nothing was committed")


def create_root(
    engine: Engine,
    version: int,
    data: bytes,
    root: Node,
    *,
    source: int | None = None,
    remember: bool = True,
    first_durable: Callable[[], None] | None = None,
) -> bool:
    """Create the root of `version` built on the tree of version `source` (when that
    is older than the latest one): True if ours landed, False if another root did.

    `first_durable` waits until the files the root references are durable; the root
    is created only after it returned (local disk flushes the root's content beside
    it: `Storage.create_if_absent`), and what it raises fails the commit.
    Raises TransactionExpiredError when a racing expiration makes the new root
    unusable (nothing stays committed), AmbiguousWriteError when the outcome is unknown
    (`settle_root` settles it later).
    """
    if first_durable is None:
        created = engine.roots.create(version, data)
    else:
        created = engine.roots.create(version, data, first_durable)
    if not created:
        return False
    confirm_root(engine, version, root, source=source, remember=remember)
    return True


def settle_root(engine: Engine, version: int, data: bytes) -> bool:
    """Whether an earlier create of root `version` with `data`, whose outcome was
    unknown, landed; AmbiguousWriteError while reading back still fails."""
    from trinityfs.storage.settle import settle

    landed = settle(engine.storage, root_node_file(version), data)
    if landed is None:
        raise AmbiguousWriteError(
            f"whether version {version} was committed is still unknown (reading it back failed)"
        )
    return landed


def confirm_root(
    engine: Engine, version: int, root: Node, *, source: int | None = None, remember: bool = True
) -> None:
    """The checks after our root landed, then the hint and the root cache (not when
    `root` is not the whole root: a bulk load's, whose messages stay in Arrow columns)."""
    _check_not_below_oldest(engine, version)
    if source is not None and not _source_still_exists(engine, version, source):
        raise SourceExpiredError(version, source)
    if engine.roots.hint_due(version):  # amortised: see trinityfs/txn/roots.py
        engine.roots.write_hint(version)
    root.location = root_node_file(version)
    if remember:
        engine.roots.remember(version, root)


def _source_still_exists(engine: Engine, version: int, source: int) -> bool:
    """Whether root `source` is still there after root `version` landed on its tree.

    Our root is in storage by now, so a failed check must not report "not committed":
    it is an unknown outcome (AmbiguousWriteError), like a create whose reply was lost.
    """
    try:
        return engine.roots.exists(source)
    except StorageError as exc:
        raise AmbiguousWriteError(
            f"version {version} was created, but checking that version {source}, which "
            f"it was built on, is still kept failed: {exc}"
        ) from exc


class SourceExpiredError(TransactionExpiredError):
    """Root `version` landed, but the version it was built on disappeared meanwhile:
    an expiration may sweep files the new root shares with it."""

    def __init__(self, version: int, source: int):
        super().__init__(
            f"version {source} was expired while version {version} was being built on it"
        )
        self.version = version
        self.source = source


def _check_not_below_oldest(engine: Engine, version: int) -> None:
    """A root created below _oldest_version.txt filled a hole left by expiration.

    Expiration writes the marker before deleting roots, and never deletes the root the
    marker names, so a create that succeeded because root `version` had been deleted is
    followed by a marker above it that names an existing root. Such a root is invisible
    to every reader: remove it and fail instead of reporting a commit nobody would see.
    A marker above `version` that names no root is a lie (a bit flip, a restored
    backup): the root stands and the lie is logged (expire and fsck repair and report it).
    """
    roots = engine.roots
    if roots.confirmed_latest(version):
        return  # built right on a base confirmed latest within the trust window: no hole
    try:
        marker = roots.oldest_marker() or 0
        if version >= marker:
            return
        real = roots.marker_is_real(marker)
    except (StorageError, CorruptFileError) as exc:
        raise AmbiguousWriteError(
            f"version {version} was created, but reading the oldest version marker to "
            f"confirm it is readable failed: {exc}"
        ) from exc
    if not real:
        log.warning(
            "_oldest_version.txt says %d, above the latest version %d, and names no root: "
            "ignored (run `trinityfs expire` to repair it)",
            marker,
            version,
        )
        return
    engine.storage.delete(root_node_file(version))
    raise TransactionExpiredError(
        f"version {version - 1}, the base of this transaction, was expired (oldest readable "
        f"version is {marker}); nothing was committed, retry the transaction"
    )


def rollback(engine: Engine, target_version: int, *, expected_latest: int | None = None) -> int:
    """Roll forward to a new version whose tree equals `target_version`'s (FORMAT.md 6);
    nothing is committed (-> the latest version) when the latest tree equals it already.

    `expected_latest`: CommitConflictError, nothing committed, unless the latest version
    is that one; the create of root `expected_latest + 1` is the check, so a commit
    landing while the rollback runs is caught as well.

    The target is re-validated against the oldest readable version inside every
    attempt, right before the create: a racing expiration makes the rollback fail with
    VersionNotFoundError instead of landing a root over swept files. If the target
    disappears right after our root landed, the new root is checked file by file
    (rare: an expiration that deleted the target after our check); when files are
    gone it is undone by committing the previous latest tree again on top of it.
    """
    what = f"rollback to version {target_version}"
    target = engine.snapshot(target_version)
    verified: set[str] = set()
    blocked = BlockedRoot()
    version: int | None = None
    while True:
        latest = engine.snapshot()
        if version is not None:  # the create of `version` lost
            blocked.lost(version, latest.version)
        if expected_latest is not None and latest.version != expected_latest:
            moved = expected_latest + 1 if latest.version > expected_latest else latest.version
            raise CommitConflictError(
                "",
                moved,
                f"{what}: the latest version is {latest.version}, not {expected_latest}"
                + (f" (version {moved} landed after it)" if moved > expected_latest else "")
                + "; nothing was committed",
            )
        if latest.version == target_version:
            return latest.version
        try:
            differs = verify_newly_reached(engine, target, latest, verified)
        except StorageFileNotFoundError:
            check_source_kept(engine, target_version, what)  # expired meanwhile: says so
            raise
        if not differs:
            return latest.version  # the latest tree is the target's: nothing to commit
        version = latest.version + 1
        order = target.lakehouse_def.order
        data, root = build_root(
            engine,
            version,
            target.root,
            {},
            order=order,
            budget=engine.budget(latest.lakehouse_def),
            # exports and settings belong to the lakehouse, not to the rolled-back tree
            lakehouse_def=latest.lakehouse_def_location,
            previous=latest,
            rollback_from=latest.version,
            tree_version=target_version,
        )
        check_source_kept(engine, target_version, what)
        try:
            if create_root(engine, version, data, root, source=target_version):
                return version
            if expected_latest is not None:  # another commit created root `version`
                raise CommitConflictError(
                    "",
                    version,
                    f"{what}: version {version} landed while the rollback was committed "
                    f"(the latest version is no longer {expected_latest}); nothing was "
                    "committed",
                )
        except SourceExpiredError:
            gone, undone = landed_on_expired(engine, version, root, order, latest, what)
            if gone is None:
                return version
            raise VersionNotFoundError(
                f"{what}: version {target_version} was expired while the rollback was "
                f"being committed and {gone} is gone; "
                + (
                    f"version {version} was undone by version {version + 1} (the tree "
                    "from before the rollback)"
                    if undone
                    else f"version {version} is unreadable: roll back to a kept version"
                )
            ) from None


def landed_on_expired(
    engine: Engine, version: int, root: Node, order: int, before: Snapshot, what: str
) -> tuple[str | None, bool]:
    """Root `version` landed on an older tree whose root was gone right after
    (SourceExpiredError: an expiration that counted root `version` among the kept ones
    removed it, and marks what root `version` references). Check every file it
    references: all there, write the hint (-> (None, False)); one gone, commit the tree
    of `before` (the latest one before ours) again on top when that tree is whole
    (-> (the first missing file, whether it was undone))."""
    missing = missing_files(engine, root, order)
    if not missing:
        log.warning(
            "%s: the target was expired right after version %d landed; "
            "every file of version %d is present",
            what,
            version,
            version,
        )
        engine.roots.write_hint(version)
        return None, False
    undone = not missing_files(engine, before.root, before.lakehouse_def.order) and undo(
        engine, version, before
    )
    return missing[0], undone


def verify_newly_reached(
    engine: Engine, target: Snapshot, latest: Snapshot, verified: set[str]
) -> bool:
    """Before a rollback makes the tree of `target` the latest one: verify every node
    of it and the definition of every key whose definition differs from `latest`'s
    (`verified`: definitions already checked); -> whether any key differs. A commit
    carries forward by name only
    what its base, the latest version, already reached; a rollback brings back what
    the latest did not reach, so it must read it (docs/FORMAT-CHOICES.md, "What a
    commit verifies"). CorruptFileError or StorageFileNotFoundError name the file."""
    try:
        engine.nodes(target.lakehouse_def.order).verify_below(target.root)
        codec = KeyCodec.from_lakehouse_def(target.lakehouse_def)
        differs = diff_snapshots(latest, target)
        for key, (_old, location) in differs.items():
            if location is None or location in verified:
                continue
            cls = _DEFINITION_CLASSES[codec.decode(key).kind]
            decode_definition(engine.storage.read_immutable(location), cls, location)
            verified.add(location)
    except CorruptFileError as exc:
        raise exc.with_version(target.version) from None
    return bool(differs)


_DEFINITION_CLASSES = {"namespace": NamespaceDef, "table": TableDef, "view": ViewDef}


def missing_files(engine: Engine, root: Node, order: int) -> list[str]:
    """Files the tree of `root` points to that are not in storage (checked, not cached)."""
    storage = engine.storage
    nodes = engine.nodes(order)
    missing: list[str] = []
    ldef = root.system.get(KEY_LAKEHOUSE_DEF)
    definitions = {ldef} if ldef else set()
    frontier: list[Node] = [root]
    while frontier:
        following: list[Node] = []
        for node in frontier:
            definitions.update(node.values)
            definitions.update(v for v, _ in node.buffer.values() if v is not None)
            for child in node.children or ():
                if isinstance(child, Node):
                    following.append(child)
                elif not storage.exists(child):
                    missing.append(child)
                else:
                    following.append(nodes.load(child))
        frontier = following
    missing.extend(sorted(d for d in definitions if not storage.exists(d)))
    return missing


def undo(engine: Engine, landed: int, before: Snapshot) -> bool:
    """Commit the tree of `before` again right on top of `landed`; False when another
    commit got there first (its changes must not be reverted)."""
    latest = engine.snapshot(landed)
    data, root = build_root(
        engine,
        landed + 1,
        before.root,
        {},
        order=before.lakehouse_def.order,
        budget=engine.budget(latest.lakehouse_def),
        lakehouse_def=latest.lakehouse_def_location,
        previous=latest,
        rollback_from=landed,
        tree_version=before.version,
        extra={UNDOES_ROW: str(landed)},
    )
    if not create_root(engine, landed + 1, data, root):
        return False
    log.warning("undid version %d with version %d", landed, landed + 1)
    return True


def undo_if_gone(
    engine: Engine, version: int, before: Snapshot, locations: Iterable[str], what: str
) -> None:
    """Root `version`, built on `before`, landed late: when one of `locations` (files it
    references that cannot be written back) was swept meanwhile, commit the tree of
    `before` again on top and raise TransactionExpiredError. A check that fails is
    logged (run fsck) and the commit stands: it landed."""
    try:
        gone = first_missing(engine.storage, locations)
    except StorageError as exc:
        log.error(
            "%s: version %d landed late; checking that its files survived a concurrent "
            "expiration failed (%s): run `trinityfs fsck`",
            what,
            version,
            exc,
        )
        return
    if gone is None:
        return
    try:
        undone = undo(engine, version, before)
    except StorageError as exc:
        log.error("undoing version %d failed: %s", version, exc)
        undone = False
    raise TransactionExpiredError(
        f"{what}: version {version} landed late, and an expiration had swept {gone}, "
        "which it references, meanwhile; "
        + (
            f"version {version + 1} restores version {before.version}: nothing stays committed"
            if undone
            else f"version {version} stays unreadable: run `trinityfs fsck`"
        )
    )
