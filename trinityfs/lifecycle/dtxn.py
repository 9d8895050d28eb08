"""Distributed transactions (FORMAT.md section 6): begun in one process, changed in
others, committed from any of them before `expire_at_millis`.

Stored state, all in the lakehouse's own directory:

- ``TransactionDef`` at the optimized path of ``txn-<id>.binpb`` (derived from the id,
  so any process finds it): id, isolation level, the beginning root (the root node
  file of the base version), the running root, began_at_millis, expire_at_millis.
  Created with create-if-absent by `begin` (so ids are unique and expiration sees the
  transaction from its first moment), overwritten by each `save`, deleted by commit
  and abort.
- The running root: a node file (optimized ``node-<uuid4>.arrow``) holding the base
  tree with the pending changes applied as buffered messages of version base+1, built
  by the same copy-on-write writer as a commit. The pending changes are exactly the
  root's messages of version base+1 (a commit never flushes the messages of the version
  it builds, so they all stay in the root); its ``lakehouse_def`` row is the pending
  LakehouseDef (the base's when unchanged); a trinityfs system row
  ``trinityfs_dependencies`` (JSON) carries the conflict dependencies, so that a
  commit from another process validates exactly like one from the process that made
  the changes (namespaces that must still exist, dropped namespaces that must stay
  empty, and under SERIALIZABLE the keys and ranges read), and names the transaction
  and its base version (`load` refuses a running root of another transaction or
  base). Readers of the format ignore unknown system rows.
- The definition files of pending puts, written by `save` (a commit writes only what
  was added since the last save).

The root of the version a commit lands names the transaction (system row
``trinityfs_transaction``) and its beginning (``trinityfs_transaction_began``): a
process committing the same transaction at the same time loses the race, finds it, and
is told "already committed as version N"; a root of an earlier transaction of the same
id is not this one's. Closing (the closing claim, abort): lifecycle/dtxn_close.py.

Stored state is checked before it is trusted (`load`): what it stages must be object
definitions of this lakehouse, its lakehouse definition must keep what is fixed at
creation, and fields or isolation levels of a newer trinityfs are refused.

Before the first save the running root is the beginning root itself. A process that
loads a transaction gets the state of the last save. Saves from two processes at once
are last-writer-wins: hand a transaction from process to process, do not share it.

Expiry: loading, saving and committing fail with TransactionExpiredError at or after
`expire_at_millis` (committing checks right before it creates the root). Expiration of
versions keeps the base version, everything newer, and every file the transaction's
stored state points to while the transaction is not expired, plus the grace period.
"""

from __future__ import annotations

import logging
import time
import uuid

from trinityfs.errors import (
    AlreadyExistsError,
    AmbiguousWriteError,
    CorruptFileError,
    InvalidArgumentError,
    StorageError,
    TransactionClosedError,
    TransactionExpiredError,
    TransactionNotFoundError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.definitions import (
    decode_lakehouse_def,
    encode_definition,
    parse_isolation_level,
)
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF, KEY_PREVIOUS_ROOT, KeyCodec
from trinityfs.format.paths import (
    new_lakehouse_def_location,
    new_node_location,
    parse_root_node_file,
    root_node_file,
    transaction_location,
)
from trinityfs.format.trinitylake_pb2 import TransactionDef
from trinityfs.lifecycle.dtxn_checks import (
    check_known,
    same_lakehouse,
    special_file,
    staged_definition_problem,
)
from trinityfs.lifecycle.dtxn_close import (
    BEGAN_ROW,
    COMMITTED_ROW,
    Closing,
    began,
    committed_as,
    stale_claim_advice,
)
from trinityfs.lifecycle.dtxn_files import (
    CLAIM_SUFFIX,
    DEPENDENCIES_ROW,
    MAX_TXN_LIFETIME_MILLIS,
    canonical_id,
    claim_location,
    decode_transaction_def,
    dependencies_from_json,
    dependencies_to_json,
    encode_transaction_def,
    lifetime_bound,
    read_transaction_def,
)
from trinityfs.storage.missing import first_missing
from trinityfs.storage.settle import create_settled, forget_unsettled, settle, unsettled
from trinityfs.txn.conflicts import LAKEHOUSE_DEF_KEY
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import build_root
from trinityfs.txn.snapshot import Snapshot

log = logging.getLogger(__name__)


class DistributedTxn(Closing):
    """A `Transaction` whose state can be saved and loaded by id in another process
    (closing it, the claim and abort: `trinityfs.lifecycle.dtxn_close.Closing`)."""

    source_may_be_old = True  # its base may be long past: re-validated in the commit

    def __init__(self, engine: Engine, base: Snapshot, tdef: TransactionDef):
        super().__init__(engine, base, tdef.isolation_level)
        self.tdef = tdef
        self.began_at_millis = tdef.began_at_millis
        self._present: set[str] = set()  # staged definitions known to be stored
        self.root_rows = {COMMITTED_ROW: tdef.id, BEGAN_ROW: began(tdef)}

    @property
    def expire_at_millis(self) -> int:
        return self.tdef.expire_at_millis

    def check_alive(self) -> None:
        now = now_millis()
        if now >= self.tdef.expire_at_millis:
            raise TransactionExpiredError(
                f"distributed transaction {self.id} expired at {self.tdef.expire_at_millis} "
                f"({now - self.tdef.expire_at_millis} ms ago); nothing was committed"
            )

    def _rebase(self, base: Snapshot, ldef_location: str) -> tuple[Snapshot, str]:
        """After a lost race: first, whether the winner was this very transaction,
        committed by another process at the same time (then nothing lands twice)."""
        self._check_committed_elsewhere(base.version)
        return super()._rebase(base, ldef_location)

    # -- a root that landed late (trinityfs.txn.transaction) ------------------------

    late_what = "after the commit window or after the transaction expired"

    def _landed_late(self) -> bool:
        """Expiration spares the definitions saved by `save` through the transaction
        file only until expire_at_millis plus its grace period (trinityfs/lifecycle/gc.py):
        a root that lands at or after expire_at_millis (committing is checked before
        the create, but a writer may pause between the check and the create) checks
        them, like a root landing past the commit window checks the files it wrote."""
        return super()._landed_late() or now_millis() >= self.tdef.expire_at_millis

    def _late_checked(self) -> list[str]:
        """What this commit wrote, and the definitions saved earlier (not held here:
        one that is gone cannot be written back, and the version is undone)."""
        checked = super()._late_checked()
        held = set(checked)
        checked.extend(loc for loc in self.pending.values() if loc is not None and loc not in held)
        return checked

    # -- save ---------------------------------------------------------------------

    def save(self) -> None:
        """Store the pending changes so that another process can `load` them."""
        with self.lock:
            self._save()

    def _save(self) -> None:
        self._check_open()
        self.check_alive()
        storage = self.engine.storage
        base = self.base
        ldef_location = base.lakehouse_def_location
        files = dict(self.files)
        if self.new_lakehouse_def is not None:
            ldef_bytes = encode_definition(self.new_lakehouse_def)
            ldef_location = new_lakehouse_def_location(ldef_bytes)
            files[ldef_location] = ldef_bytes
        storage.write_immutable_many(files)
        running = self.tdef.beginning_root_node_file_path
        if self.pending or self.new_lakehouse_def is not None:
            data, _root = build_root(
                self.engine,
                base.version + 1,
                base.root,
                self.pending,
                order=base.lakehouse_def.order,
                budget=self.engine.budget(base.lakehouse_def),
                lakehouse_def=ldef_location,
                previous=base,
                extra={DEPENDENCIES_ROW: dependencies_to_json(self.deps, self.id, base.version)},
            )
            running = new_node_location(data)
            storage.write_immutable(running, data)
        tdef = TransactionDef()
        tdef.CopyFrom(self.tdef)
        tdef.running_root_node_file_path = running
        self.check_alive()
        state = self._stored_state()
        if state == "other":
            raise self._closed_before("saved")
        if state == "gone":
            raise TransactionNotFoundError(
                f"distributed transaction {self.id} was committed or aborted meanwhile"
            )
        self._check_not_closing("saved", roots_checked=False)
        storage.write(self.location, encode_transaction_def(tdef))
        if storage.exists(self.claim):
            # closed meanwhile: our write may have brought back a removed file
            storage.delete(self.location)
            self._check_not_closing("saved", roots_checked=False)
        self.tdef = tdef
        self._present.update(self.files)
        self.files.clear()  # stored now; reads fall back to storage

    # -- commit and abort ---------------------------------------------------------

    def commit(self) -> int:
        """Commit from this process; the stored transaction is removed afterwards.

        After an unknown outcome (AmbiguousWriteError) calling commit again settles it:
        the version if it landed, else a new attempt.
        """
        with self.lock:
            return self._commit_stored()

    def _commit_stored(self) -> int:
        storage = self.engine.storage
        if not self.unsettled:
            self._check_open()
            self.check_alive()
            if not self._take_claim():
                if not storage.exists(self.location):
                    raise TransactionNotFoundError(
                        f"distributed transaction {self.id} was committed or aborted elsewhere"
                    )
                self._check_committed_elsewhere(self.base.version)
                self._check_not_closing("committed")
            try:
                state = self._stored_state()
                if state == "other":
                    raise self._closed_before("committed")
                if state == "gone":
                    raise TransactionNotFoundError(
                        f"distributed transaction {self.id} was committed or aborted elsewhere"
                    )
                self._check_staged_definitions()
            except BaseException:
                self._release_claim()
                raise
        try:
            version = super().commit()
        except BaseException:
            # landed, and an interrupt or the late check raises: no process may load it
            # and commit it again
            if self.committed_version is not None:
                self._remove_stored(self.committed_version)
            elif not self.unsettled:
                self._release_claim()  # did not land: another commit or abort may act
            raise
        self._remove_stored(version)
        return version

    def _check_staged_definitions(self) -> None:
        """Refuse to land a version referencing a staged definition that is not stored
        (loaded state that lies, or was damaged): CorruptFileError naming it, before
        anything is written. One existence check per definition a save stored
        elsewhere (in parallel batches); those this process wrote or checked are not
        checked again."""
        unchecked = {
            location: key
            for key, location in self.pending.items()
            if location is not None and location not in self.files and location not in self._present
        }
        gone = first_missing(self.engine.storage, unchecked)
        if gone is not None:
            raise CorruptFileError(
                self.location,
                f"the staged definition of {self.deps.describe(unchecked[gone])}, {gone}, "
                "is not stored; nothing was committed",
            )
        self._present.update(unchecked)


def begin(
    engine: Engine,
    *,
    isolation: str | int | None = None,
    ttl_millis: int | None = None,
    txn_id: str | None = None,
) -> DistributedTxn:
    """Begin at the latest version and store the (empty) transaction at once.

    An id given again may have been begun, by another process, in the same millisecond
    on the same base, and committed above that base before this begin created its file:
    the two would be told apart by nothing (`began`), and this transaction's commit
    would be answered with the other's version. So a begin of a given id checks, right
    after its file is created (the other's root landed before its file was removed),
    that no version above its base names the id and that beginning; if one does, it
    removes its file and begins again, on a newer base in a later millisecond."""
    for _ in range(BEGIN_TRIES):
        txn = _begin_once(engine, isolation, ttl_millis, txn_id)
        if txn_id is None or txn._committed_elsewhere(txn.base.version) is None:
            return txn
        engine.storage.delete(txn.location)
        while now_millis() <= txn.began_at_millis:
            time.sleep(0.001)
    raise AlreadyExistsError(
        f"distributed transaction {txn_id!r} was begun and committed by others again and "
        f"again while this process began it ({BEGIN_TRIES} times); nothing was begun"
    )


#: begins of one id that found an earlier transaction of that id indistinguishable
BEGIN_TRIES = 3


def _begin_once(
    engine: Engine, isolation: str | int | None, ttl_millis: int | None, txn_id: str | None
) -> DistributedTxn:
    """One begin (see `begin`)."""
    base = engine.snapshot()
    ldef = base.lakehouse_def
    level = ldef.txn_isolation_level if isolation is None else parse_isolation_level(isolation)
    ttl = ldef.txn_ttl_millis if ttl_millis is None else ttl_millis
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
        raise InvalidArgumentError(f"a transaction's ttl_millis must be an int > 0, got {ttl!r}")
    bound = lifetime_bound(ldef)
    if ttl > bound:
        raise InvalidArgumentError(
            f"a transaction's ttl_millis must be at most {bound} (the maximum lifetime: 30 "
            f"days, or the lakehouse's txn_ttl_millis when longer), got {ttl}"
        )
    generated = txn_id is None
    txn_id = str(uuid.uuid4()) if txn_id is None else canonical_id(txn_id, new=True)
    location = transaction_location(txn_id)  # validates the id
    began = now_millis()
    beginning = root_node_file(base.version)
    tdef = TransactionDef(
        id=txn_id,
        isolation_level=level,
        beginning_root_node_file_path=beginning,
        running_root_node_file_path=beginning,
        began_at_millis=began,
        expire_at_millis=began + ttl,
    )
    data = encode_transaction_def(tdef)
    earlier = unsettled(engine.storage, location)
    try:
        created = create_settled(
            engine.storage, location, data, f"distributed transaction {txn_id}"
        )
    except AmbiguousWriteError:
        if not generated:
            raise  # begin again with the same id: it recognizes its own file
        # nobody else knows a generated id: remove what may have landed, so that no
        # orphan transaction file pins expiration for its whole TTL
        try:
            engine.storage.delete(location)
        except TrinityError:
            raise AmbiguousWriteError(
                f"beginning distributed transaction {txn_id} had an unknown outcome and its "
                "file could not be removed; expiration removes it after its TTL"
            ) from None
        forget_unsettled(engine.storage, location)
        raise StorageError(
            f"beginning a distributed transaction failed (the store did not confirm "
            f"{location}); nothing was begun, begin again"
        ) from None
    if not created:
        if earlier is None or settle(engine.storage, location, earlier) is not True:
            raise AlreadyExistsError(f"a distributed transaction with id {txn_id!r} already exists")
        # our own earlier begin, whose outcome was unknown, landed: adopt it
        tdef = decode_transaction_def(earlier, location)
        base = engine.snapshot(parse_root_node_file(tdef.beginning_root_node_file_path))
    if not generated:
        # the id was used before: the closing claim of that transaction may still be
        # there (expiration removes it after the grace period). Its file is gone (the
        # create succeeded), so whoever closed it is done: the claim is stale.
        engine.storage.delete(claim_location(txn_id))
    return DistributedTxn(engine, base, tdef)


def load(engine: Engine, txn_id: str) -> DistributedTxn:
    """The transaction as of its last save, ready for more changes or a commit.

    What the stored state points to is checked before it is trusted (`_load_running`):
    a transaction file can be rewritten, and its running root replaced, by anyone.
    """
    txn_id = canonical_id(txn_id)
    if txn_id.endswith(CLAIM_SUFFIX):
        raise TransactionNotFoundError(
            f"{txn_id!r} is the closing claim of a distributed transaction, not one"
        )
    tdef = read_transaction_def(engine, txn_id)
    location = transaction_location(txn_id)
    if engine.storage.exists(claim_location(txn_id)):
        _refuse_if_committed(engine, tdef)
        raise TransactionClosedError(
            f"distributed transaction {txn_id} is being (or was) committed or aborted by "
            "another process"
            + stale_claim_advice(
                engine, txn_id, engine.snapshot().lakehouse_def, "loaded", roots_checked=False
            )
        )
    check_known(tdef, location)
    now = now_millis()
    if now >= tdef.expire_at_millis:
        raise TransactionExpiredError(
            f"distributed transaction {txn_id} expired at {tdef.expire_at_millis} "
            f"({now - tdef.expire_at_millis} ms ago)"
        )
    base_version = parse_root_node_file(tdef.beginning_root_node_file_path)
    if base_version is None:
        raise CorruptFileError(
            location, f"beginning root {tdef.beginning_root_node_file_path!r} is not a root"
        )
    try:
        base = engine.snapshot(base_version)
    except VersionNotFoundError:
        latest = engine.roots.latest_version()
        if base_version > latest:
            raise CorruptFileError(
                location,
                f"beginning root is version {base_version}, above the latest version {latest}",
            ) from None
        raise TransactionExpiredError(
            f"distributed transaction {txn_id} began at version {base_version}, which was expired"
        ) from None
    txn = DistributedTxn(engine, base, tdef)
    running_location = tdef.running_root_node_file_path
    if running_location and running_location != tdef.beginning_root_node_file_path:
        _load_running(txn, running_location, location)
    return txn


def _refuse_if_committed(engine: Engine, tdef: TransactionDef) -> None:
    """A closing claim is held: TransactionClosedError "committed as version N" when a
    version names the transaction (its committer stopped before removing the file: the
    claim and the file are what a crash right after the root landed leaves)."""
    base_version = parse_root_node_file(tdef.beginning_root_node_file_path)
    version = None if base_version is None else committed_as(engine, tdef, base_version)
    if version is not None:
        raise TransactionClosedError(
            f"distributed transaction {tdef.id} was committed as version {version} (the "
            "process that committed it stopped before removing it); it cannot be loaded"
        )


def _load_running(txn: DistributedTxn, running_location: str, location: str) -> None:
    """Take the pending changes and dependencies of `txn` from its running root, after
    checking that the root is this transaction's, built on its beginning root, and
    that what it stages can be committed."""
    engine, base = txn.engine, txn.base
    special = special_file(running_location, node_ok=True)
    if special is not None:
        raise CorruptFileError(location, f"running root {running_location!r} is {special}")
    running = engine.roots.load_location(running_location)
    deps, saved_by = dependencies_from_json(running.system.get(DEPENDENCIES_ROW), running_location)
    built_on = running.system.get(KEY_PREVIOUS_ROOT)
    if saved_by.get("txn", txn.id) != txn.id:
        raise CorruptFileError(
            location,
            f"running root {running_location} was saved by distributed transaction "
            f"{str(saved_by['txn'])[:80]!r}, not this one",
        )
    beginning = base.version
    other_base = None
    if built_on is not None and built_on != root_node_file(beginning):
        built = parse_root_node_file(built_on)
        other_base = f"version {built}" if built is not None else repr(built_on[:80])
    elif saved_by.get("base", beginning) != beginning:
        other_base = f"version {str(saved_by['base'])[:20]}"
    if other_base is not None:
        raise CorruptFileError(
            location,
            f"running root {running_location} was built on {other_base}, not on the "
            f"beginning root (version {beginning})",
        )
    deps.describe = txn.deps.describe  # names objects, never padded keys
    codec = KeyCodec.from_lakehouse_def(base.lakehouse_def)
    for key, (value, version) in running.buffer.items():
        if version == beginning + 1:
            problem = None if value is None else staged_definition_problem(key, value, codec)
            if problem is not None:
                raise CorruptFileError(
                    running_location,
                    f"the staged definition of {deps.describe(key)}, {value!r}, {problem}",
                )
            txn.pending[key] = value
    ldef_location = running.system.get(KEY_LAKEHOUSE_DEF)
    if ldef_location is not None and ldef_location != base.lakehouse_def_location:
        ldef = decode_lakehouse_def(engine.storage.read_immutable(ldef_location), ldef_location)
        txn.new_lakehouse_def = same_lakehouse(ldef, base.lakehouse_def, running_location)
    txn.deps = deps
    txn.deps.written.update(txn.pending)
    if txn.new_lakehouse_def is not None:
        txn.deps.written.add(LAKEHOUSE_DEF_KEY)


__all__ = [
    "BEGAN_ROW",
    "CLAIM_SUFFIX",
    "COMMITTED_ROW",
    "DEPENDENCIES_ROW",
    "MAX_TXN_LIFETIME_MILLIS",
    "DistributedTxn",
    "began",
    "begin",
    "canonical_id",
    "claim_location",
    "decode_transaction_def",
    "encode_transaction_def",
    "lifetime_bound",
    "load",
    "read_transaction_def",
]
