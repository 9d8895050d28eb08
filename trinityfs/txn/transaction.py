"""A transaction: reads at one base version, buffered writes (both in txn/staging.py),
optimistic commit (here).

Commit writes the new definition and node files, then creates the root of the next
version if absent. Losing that race is normal: the transaction checks what the winners
changed against what it depends on, and either replays its changes onto the new latest
root or raises a CommitConflictError naming the key and the winning version.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from time import sleep as _sleep

from trinityfs.errors import (
    AmbiguousWriteError,
    CommitConflictError,
    CommitRetriesExhaustedError,
    CorruptFileError,
    LakehouseNotFoundError,
    TransactionClosedError,
    TransactionExpiredError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import encode_definition, node_file_compression
from trinityfs.format.integrity import verify_named_content
from trinityfs.format.node_encode import encode_node
from trinityfs.format.paths import new_lakehouse_def_location
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.tree import Node
from trinityfs.txn.backoff import Backoff, commit_window_millis, contention_of
from trinityfs.txn.conflicts import LAKEHOUSE_DEF_KEY
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import (
    LATE_RECHECK_SECONDS,
    BlockedRoot,
    SourceExpiredError,
    build_root,
    check_source_kept,
    confirm_root,
    create_root,
    landed_on_expired,
    settle_root,
    undo,
)
from trinityfs.txn.snapshot import Snapshot
from trinityfs.txn.staging import _SERIALIZABLE, Staged
from trinityfs.txn.staging import _codec_of as _codec_of  # where it was before staging.py
from trinityfs.txn.verify import verify_before_writing

log = logging.getLogger(__name__)


class Transaction(Staged):
    """Changes to one lakehouse (`Staged`), committed atomically as one new version."""

    def __init__(self, engine: Engine, base: Snapshot, isolation: int | None = None):
        super().__init__(engine, base, isolation)
        self.committed_version: int | None = None
        self.closed = False
        self.attempts = 0
        self.replays = 0
        self.began_at_millis = now_millis()
        # set once the commit wrote its files: the lakehouse definition's location
        # and the monotonic time by which the root must be created
        self._ldef_location: str | None = None
        self._deadline = 0.0
        self._files_written_millis = 0  # wall clock: a suspended machine stops monotonic
        self._written_nodes: list[str] = []  # node files the latest attempt wrote
        # waits until the files written for the commit are durable (flushed meanwhile)
        self._files_durable: Callable[[], None] = _durable_already
        # (version, root bytes, root, base, source) of a create with an unknown outcome
        self._unsettled: tuple[int, bytes, Node, Snapshot, int | None] | None = None

    #: distributed transactions may be built on an old version: re-validate it
    source_may_be_old = False
    #: system rows the root this transaction commits carries besides the format's
    root_rows: dict[str, str] | None = None

    def _check_open(self) -> None:
        if self._unsettled is not None:
            version = self._settle_unsettled()
            if version is not None:
                raise TransactionClosedError(
                    f"the transaction was committed as version {version} (its outcome "
                    "had been unknown)"
                )
        if self.closed:
            if self.committed_version is not None:
                raise TransactionClosedError(
                    f"the transaction was committed as version {self.committed_version}"
                )
            raise TransactionClosedError("the transaction is already committed or aborted")

    # -- commit ---------------------------------------------------------------------

    def abort(self) -> None:
        """Forget every change; nothing is committed.

        A transaction whose commit landed cannot be aborted: TransactionClosedError
        names its version (also when the commit raised after landing, and when a commit
        of unknown outcome is settled here and turns out to have landed). Aborting an
        aborted transaction, or one whose commit did not land, changes nothing.
        """
        with self.lock:
            self._refuse_abort_if_committed()
            self._forget()

    def _refuse_abort_if_committed(self) -> None:
        """TransactionClosedError when a commit of this transaction landed (one of
        unknown outcome is settled first); nothing is changed here."""
        if self._unsettled is not None:
            self._check_open()
        if self.committed_version is not None:
            raise TransactionClosedError(
                f"the transaction was committed as version {self.committed_version}; "
                "it cannot be aborted"
            )

    def _forget(self) -> None:
        """Close the handle and drop its changes: the abort took effect."""
        self.closed = True
        self.pending.clear()
        self.files.clear()

    def commit(self) -> int:
        """Commit atomically; return the new version (the base one if nothing changed).

        Lost races are retried (replayed onto the new latest version), the ones that
        lost more races in a row first (`trinityfs.txn.backoff`), until the commit
        budget runs out (`COMMIT_BUDGET_SECONDS`):
        then CommitRetriesExhaustedError, nothing committed. When the outcome of
        creating the root is unknown (AmbiguousWriteError), the transaction stays
        unsettled: calling `commit` again (or `settle`) finds out whether it landed
        and never applies the changes twice. A commit from another thread meanwhile
        waits for this one (then TransactionClosedError says what it did).
        """
        with self.lock:
            return self._commit_under_lock()

    def _commit_under_lock(self) -> int:
        if self._unsettled is not None:
            version = self._settle_unsettled()
            if version is not None:
                return version
        self._check_open()
        if not self.has_changes:
            self.closed = True
            return self.base_version
        if self._ldef_location is None:
            verify_before_writing(self.engine, self.base)  # verify="tree" only
            ldef_location = self.base.lakehouse_def_location
            if self.new_lakehouse_def is not None:
                ldef_bytes = encode_definition(self.new_lakehouse_def)
                ldef_location = new_lakehouse_def_location(ldef_bytes)
                self.files[ldef_location] = ldef_bytes
            # flushed while the root is built; waited for before the root is created
            self._files_durable = self.engine.storage.write_immutable_many(self.files, wait=False)
            self._ldef_location = ldef_location
            self._deadline = time.monotonic() + commit_window_millis(self.base.lakehouse_def) / 1000
            self._files_written_millis = now_millis()
        base, ldef_location = self.base, self._ldef_location
        backoff = Backoff(contention_of(self.engine))
        blocked = BlockedRoot()
        if backoff.should_defer_fresh() and not self.source_may_be_old:
            # yield to the commits that lost races lately, then start from the latest
            backoff.sleep(self._deadline)
            base, ldef_location = self._rebase(base, ldef_location)
            self._ldef_location = ldef_location
            backoff.start_attempt()
        while True:
            self.attempts += 1
            version = base.version + 1
            root_bytes, root = self._build_root(base, version, ldef_location)
            self.check_alive()
            self._check_budget(version)
            source = base.version if self.source_may_be_old and base is self.base else None
            if source is not None:
                check_source_kept(self.engine, source, f"transaction based on version {source}")
            try:
                created = create_root(
                    self.engine,
                    version,
                    root_bytes,
                    root,
                    source=source,
                    first_durable=self._wait_files_durable,
                )
            except AmbiguousWriteError:
                self._unsettled = (version, root_bytes, root, base, source)
                raise
            except SourceExpiredError:  # landed: never "not committed" without a check
                self._committed(version)
                self._check_after_source_expired(version, base, root)
                return version
            except TransactionExpiredError:
                self.closed = True
                raise
            backoff.attempted(lost=not created)
            if created:
                # landed: marked committed before the late check, which may wait
                # seconds, so an interrupt there never leaves it "not committed"
                self._committed(version)
                self._restore_if_swept(version, base)
                return version
            # Back off before reading the latest version, not between reading and using
            # it: a version read before the sleep is taken by whoever committed during it.
            backoff.sleep(self._deadline)
            base, ldef_location = self._rebase(base, ldef_location)
            self._ldef_location = ldef_location
            # an attempt is timed from here: catching up with the versions it lost to
            # is no part of the race, and waits scaled by it grew with the backlog
            backoff.start_attempt()
            self.replays += 1
            blocked.lost(version, base.version, self._deadline)  # no winner seen: wait

    def _wait_files_durable(self) -> None:
        """Flush this commit's files (written, and their write-out started, before the
        root was built) and wait: called by the root's create right before it links
        the root, beside the flush of the root's own content, so no root is created
        before every file it references is durable. A failed flush fails the commit
        before any root exists, and keeps failing if the create is retried."""
        try:
            self._files_durable()
        except BaseException:
            self._ldef_location = None
            raise
        self._files_durable = _durable_already

    def settle(self) -> int | None:
        """Settle a commit whose outcome was unknown: the version if it landed, None
        if it did not (the transaction is open again); AmbiguousWriteError while
        that still cannot be told."""
        with self.lock:
            if self._unsettled is None:
                return self.committed_version
            return self._settle_unsettled()

    @property
    def unsettled(self) -> bool:
        """Whether a commit of this transaction has an unknown outcome."""
        return self._unsettled is not None

    def _settle_unsettled(self) -> int | None:
        assert self._unsettled is not None
        version, data, root, base, source = self._unsettled
        landed = settle_root(self.engine, version, data)
        self._unsettled = None
        if not landed:
            return None
        try:
            confirm_root(self.engine, version, root, source=source)
        except AmbiguousWriteError:
            self._unsettled = (version, data, root, base, source)
            raise
        except SourceExpiredError:
            self._committed(version)
            self._check_after_source_expired(version, base, root)
            return version
        except TransactionExpiredError:
            self.closed = True
            raise
        self._committed(version)  # landed: before the late check, as in commit()
        self._restore_if_swept(version, base)  # it may have landed late, as any root
        return version

    def _committed(self, version: int) -> int:
        self.committed_version = version
        self.closed = True
        return version

    def _late(self) -> bool:
        """Past the commit window since this commit's files were written, by either
        clock (CLOCK_MONOTONIC stands still while the machine is suspended; the wall
        clock is what expiration ages files by)."""
        window = commit_window_millis(self.base.lakehouse_def)
        return (
            time.monotonic() > self._deadline or now_millis() - self._files_written_millis > window
        )

    #: what "late" means in the messages of a root that landed late
    late_what = "after the commit window"

    def _landed_late(self) -> bool:
        """Whether our root, which just landed, may reference files an expiration swept
        meanwhile: landed past the commit window (`_late`)."""
        return self._late()

    def _late_checked(self) -> list[str]:
        """The files a root that landed late checks: what this commit wrote."""
        return [*self.files, *self._written_nodes]

    def _restore_if_swept(self, version: int, base: Snapshot) -> None:
        """After our root landed late (the writer paused, or the machine slept, between
        its budget check and the create): expiration spares unreferenced files only for
        the commit window, so one that ran meanwhile may have swept files this root
        references. Write them back (content-hash names: same location, same bytes):
        the definitions this transaction holds, and node files from the nodes this
        process still has decoded. Should one be beyond that, commit the base tree again
        on top and raise: nothing stays committed. On time, nothing is checked.

        Checked twice: at once (readers of the new version find the files again
        soon), and after LATE_RECHECK_SECONDS, when every delete of a sweep that decided
        before our root landed has been issued (a sweep issues its deletes within
        SWEEP_DECISION_MILLIS of a look at the latest version; trinityfs/lifecycle/gc.py)."""
        if not self._landed_late():
            return
        if self._restore_swept(version, base):
            try:
                _await_sweeps_in_flight(LATE_RECHECK_SECONDS)
            except BaseException:  # Ctrl-C: committed, but the second check is skipped
                log.warning(
                    "version %d landed %s; interrupted before checking its files "
                    "again: run `trinityfs fsck`",
                    version,
                    self.late_what,
                )
                raise
            self._restore_swept(version, base)

    def _restore_swept(self, version: int, base: Snapshot) -> bool:
        """One check of `_restore_if_swept`: False when it could not be made (logged)."""
        storage = self.engine.storage
        try:
            gone = [loc for loc in self._late_checked() if not storage.exists(loc)]
        except TrinityError as exc:  # committed: only an error for what did not happen
            log.error(
                "version %d landed %s; checking that its files survived a concurrent "
                "expiration failed (%s): run `trinityfs fsck`",
                version,
                self.late_what,
                exc,
            )
            return False
        if not gone:
            return True
        log.warning(
            "version %d landed %s and %d of its files were swept meanwhile by an "
            "expiration (first %s): writing them back",
            version,
            self.late_what,
            len(gone),
            gone[0],
        )
        lost = [loc for loc in gone if not self._write_back(loc, base.lakehouse_def)]
        if lost:
            self.closed = True  # landed: never committed a second time
            try:
                undone = undo(self.engine, version, base)
            except TrinityError as exc:
                log.error("undoing version %d failed: %s", version, exc)
                undone = False
            if undone:
                self.committed_version = None  # nothing stays committed
            raise TransactionExpiredError(
                f"version {version} landed {self.late_what}, and an expiration "
                f"had swept {lost[0]}, which it references, meanwhile (it could not be "
                "written back); "
                + (
                    f"version {version + 1} restores version {base.version}: nothing "
                    "stays committed"
                    if undone
                    else f"version {version} stays unreadable: run `trinityfs fsck`"
                )
            )
        return True

    def _check_after_source_expired(self, version: int, base: Snapshot, root: Node) -> None:
        """Our root landed; the root of `base` was gone right after (SourceExpiredError):
        checked as a rollback is (`publish.landed_on_expired`; a failed check is logged)."""
        what = f"version {version} built on version {base.version}"
        try:
            gone, undone = landed_on_expired(
                self.engine, version, root, base.lakehouse_def.order, base, what
            )
        except TrinityError as exc:
            log.error("%s: checking its files failed (%s): run `trinityfs fsck`", what, exc)
            return
        if gone is None:
            self._restore_if_swept(version, base)
            return
        if undone:
            self.committed_version = None  # nothing stays committed
        raise TransactionExpiredError(
            f"{what}: version {base.version} was expired right after version {version} "
            f"landed and {gone}, which it references, is gone; "
            + (
                f"version {version + 1} restores version {base.version}: nothing stays committed"
                if undone
                else f"version {version} stays unreadable: run `trinityfs fsck`"
            )
        )

    def _write_back(self, location: str, ldef: LakehouseDef) -> bool:
        """Write a swept file of this commit again; False when its bytes are beyond
        recovery or the write fails."""
        data = self.files.get(location)
        if data is None:
            data = self._node_bytes(location, ldef)
        if data is None:
            return False
        try:
            self.engine.storage.write_immutable(location, data)
        except TrinityError as exc:
            log.error("writing %s back failed: %s", location, exc)
            return False
        return True

    def _node_bytes(self, location: str, ldef: LakehouseDef) -> bytes | None:
        """The bytes of node file `location`, encoded again from the decoded node this
        process keeps, when they carry the content hash of the name (None otherwise)."""
        node = self.engine.nodes(ldef.order).cached(location)
        if node is None:
            return None
        data = encode_node(node.to_file(), ldef.order, compression=node_file_compression(ldef))
        try:
            return data if verify_named_content(location, data) else None
        except CorruptFileError:
            return None

    def _check_budget(self, version: int) -> None:
        if self._late():
            self.closed = True
            raise CommitRetriesExhaustedError(
                f"gave up on version {version} after {self.attempts - 1} lost races: more "
                f"than {commit_window_millis(self.base.lakehouse_def) / 1000:g} s (the "
                "commit budget) passed since its files were written (by the wall clock "
                "too: a paused process or a suspended machine); nothing was committed"
            )

    # -- lifetime (what expiration relies on; see trinityfs/lifecycle/expire.py) --------

    def check_alive(self) -> None:
        """Refuse to commit after the lakehouse's txn_ttl_millis (0 = no limit).

        Expiration spares files and roots younger than that, so a transaction within
        it never points to anything expiration removed.
        """
        ttl = self.base.lakehouse_def.txn_ttl_millis
        if ttl and now_millis() - self.began_at_millis > ttl:
            self.closed = True
            raise TransactionExpiredError(
                f"transaction began {now_millis() - self.began_at_millis} ms ago, longer "
                f"than txn_ttl_millis={ttl}; nothing was committed"
            )

    def _build_root(self, base: Snapshot, version: int, ldef_location: str):
        ldef = base.lakehouse_def
        self._written_nodes = []
        return build_root(
            self.engine,
            version,
            base.root,
            self.pending,
            order=ldef.order,
            budget=self.engine.budget(ldef),
            lakehouse_def=ldef_location,
            previous=base,
            compression=node_file_compression(ldef),
            written_out=self._written_nodes,
            extra=self.root_rows,
        )

    def _rebase(self, base: Snapshot, ldef_location: str) -> tuple[Snapshot, str]:
        """After a lost race: validate against every newer version, then move onto it."""
        engine = self.engine
        serializable = self.isolation == _SERIALIZABLE
        latest = engine.roots.trusted_latest()
        if latest is None or latest < base.version:  # (a confirmation older than base)
            latest = engine.roots.latest_version()
        if latest >= base.version:
            latest = base.version
            try:
                # one read per new root, validated as it comes; the read that finds the
                # next root missing is the last request before the create (fairness)
                for version in engine.roots.newer_versions(base.version):
                    latest = version
                    if engine.snapshot(version).lakehouse_def.id != base.lakehouse_def.id:
                        break  # replaced: said below
                    self.deps.validate(version, engine.changes(version), serializable)
            except VersionNotFoundError as exc:
                self.closed = True
                raise TransactionExpiredError(
                    f"versions after {base.version}, the base of this transaction, were "
                    f"expired before it could be validated against them ({exc}); nothing "
                    "was committed"
                ) from None
        new_base = engine.snapshot(latest)
        if latest < base.version or new_base.lakehouse_def.id != base.lakehouse_def.id:
            self.closed = True
            raise LakehouseNotFoundError(
                f"{engine.storage.url} now holds another lakehouse (latest version {latest}, "
                f"lakehouse id {new_base.lakehouse_def.id!r}; this transaction began at "
                f"version {base.version} of {base.lakehouse_def.id!r}): it was removed or "
                "replaced while open (open it again); nothing was committed"
            )
        if self.new_lakehouse_def is None:
            ldef_location = new_base.lakehouse_def_location
        if new_base.lakehouse_def.order != base.lakehouse_def.order:
            raise CommitConflictError(
                LAKEHOUSE_DEF_KEY,
                latest,
                f"commit conflict: version {latest} changed the tree order of the lakehouse",
            )
        self._reapply(new_base)
        return new_base, ldef_location

    def _reapply(self, new_base: Snapshot) -> None:
        """Redo commuting writes of keys a winner changed onto its definitions."""
        files: dict[str, bytes] = {}
        for key in sorted(self.deps.to_reapply):
            current = new_base.get(key)
            latest = None if current is None else self.engine.storage.read_immutable(current)
            location, data = self.deps.reapply[key](latest, new_base.version)
            self.pending[key] = location
            self.files[location] = data
            files[location] = data
        self.deps.to_reapply.clear()
        if files:
            self.engine.storage.write_immutable_many(files)


def _await_sweeps_in_flight(seconds: float) -> None:
    """Wait before a late root checks its files again (tests replace it)."""
    _sleep(seconds)


def _durable_already() -> None:
    """No flush is pending."""
