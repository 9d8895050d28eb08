"""Closing a distributed transaction (trinityfs.lifecycle.dtxn): the closing claim, the
commit found in the roots, and abort.

A commit or an abort first creates the transaction's closing claim (`claim_location`,
create-if-absent): one of them acts. The root a commit lands names the transaction
(COMMITTED_ROW) and its beginning (BEGAN_ROW), so another process committing it at the
same time, or aborting it later, finds that commit; a root of an earlier transaction of
the same id (ids can be begun again once closed) is not this one's. Before acting on
the stored file, a closer checks that it still is this transaction's (`_stored_state`).
docs/FORMAT-CHOICES.md "Closing a distributed transaction".
"""

from __future__ import annotations

import logging

from trinityfs.errors import (
    AmbiguousWriteError,
    CorruptFileError,
    StorageFileNotFoundError,
    TransactionClosedError,
    TransactionNotFoundError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.paths import transaction_location
from trinityfs.format.trinitylake_pb2 import LakehouseDef, TransactionDef
from trinityfs.lifecycle.dtxn_files import (
    CLAIM_SUFFIX,
    claim_location,
    decode_transaction_def,
    encode_transaction_def,
    lifetime_bound,
)
from trinityfs.storage.settle import create_settled, forget_unsettled, settle, unsettled
from trinityfs.txn.backoff import commit_window_millis
from trinityfs.txn.engine import Engine, now_millis
from trinityfs.txn.publish import UNDOES_ROW
from trinityfs.txn.transaction import Transaction

log = logging.getLogger(__name__)

# the root of the version a distributed transaction committed names it (readers ignore
# the row): a process committing the same transaction at the same time finds it
COMMITTED_ROW = "trinityfs_transaction"
# ... and its beginning (`began`): an id can be begun again once its transaction closed,
# and a root of the earlier transaction is not this one's commit
BEGAN_ROW = "trinityfs_transaction_began"


def began(tdef: TransactionDef) -> str:
    """What tells a transaction from another begun under the same id: when it began and
    on which root (neither changes after `begin`; `save` keeps both)."""
    return f"{tdef.began_at_millis} {tdef.beginning_root_node_file_path}"


#: a closing claim older than the commit window plus this (two machines' clocks may
#: differ) was made by a commit that would have given up by now, or by a process that
#: stopped: `stale_claim_advice` says how to clear it
CLAIM_SKEW_MARGIN_MILLIS = 60_000


def stale_claim_advice(
    engine: Engine, txn_id: str, ldef: LakehouseDef, what: str, *, roots_checked: bool = True
) -> str:
    """For the error of a transaction whose closing claim another process holds: when
    that claim is older than any commit may take (`commit_window_millis`, plus
    CLAIM_SKEW_MARGIN_MILLIS), a sentence naming the claim, its age and how to clear it;
    else "". `roots_checked`: the caller found no version naming the transaction.
    A claim is never taken over: a committer paused between its last check and
    the create of its root may still land it (docs/FORMAT-CHOICES.md "Closing a
    distributed transaction")."""
    location = claim_location(txn_id)
    try:
        claim = decode_transaction_def(
            engine.storage.read(location), location, lifetime_bound(ldef)
        )
    except StorageFileNotFoundError:
        return ""  # released meanwhile: trying again may succeed
    except CorruptFileError:
        return f" (its closing claim {engine.storage.url_of(location)} is unreadable)"
    age = now_millis() - claim.began_at_millis
    window = commit_window_millis(ldef)
    if age <= window + CLAIM_SKEW_MARGIN_MILLIS:
        return ""
    landed = (
        "and no version names the transaction: the process that made it probably stopped "
        "before its commit landed"
        if roots_checked
        else "so the process that made it probably stopped"
    )
    return (
        f". Its closing claim {engine.storage.url_of(location)} was made {age // 1000} s "
        f"ago, longer than a commit may take ({window // 1000} s), {landed}. Once no "
        "process can still be committing or aborting it, remove that file and it can be "
        f"{what} again (expiration removes it after its grace period)"
    )


def committed_as(engine: Engine, tdef: TransactionDef, after: int) -> int | None:
    """The version above `after` whose root names transaction `tdef` (COMMITTED_ROW)
    and its beginning (BEGAN_ROW; a root without it, written before the row existed,
    counts by the id alone)."""
    roots = engine.roots
    mine = began(tdef)
    found = None
    for version in range(after + 1, roots.latest_version() + 1):
        try:
            system = roots.load(version).system
        except VersionNotFoundError:
            continue  # expired: the validation after this says so
        if found is not None and system.get(UNDOES_ROW) == str(found):
            found = None  # it landed late and was undone: nothing stayed committed
        if system.get(COMMITTED_ROW) == tdef.id and system.get(BEGAN_ROW, mine) == mine:
            found = version
    return found


class Closing(Transaction):
    """The closing side of `DistributedTxn` (its base class): claim, commit found, abort."""

    tdef: TransactionDef

    @property
    def id(self) -> str:
        return self.tdef.id

    @property
    def location(self) -> str:
        return transaction_location(self.tdef.id)

    @property
    def claim(self) -> str:
        return claim_location(self.tdef.id)

    def _check_not_closing(self, what: str, *, roots_checked: bool = True) -> None:
        """TransactionClosedError when another process claimed to close it
        (`roots_checked`: no version names this transaction, checked by the caller)."""
        if self.engine.storage.exists(self.claim):
            raise TransactionClosedError(
                f"distributed transaction {self.id} is being (or was) committed or aborted by "
                f"another process; it cannot be {what}"
                + stale_claim_advice(
                    self.engine, self.id, self.base.lakehouse_def, what, roots_checked=roots_checked
                )
            )

    def _take_claim(self) -> bool:
        """Create the closing claim; False when another commit or abort holds it. An
        earlier create of ours whose outcome stayed unknown (AmbiguousWriteError) is
        settled first: when it landed, the claim is ours."""
        storage = self.engine.storage
        earlier = unsettled(storage, self.claim)
        if earlier is not None:
            landed = settle(storage, self.claim, earlier)
            if landed is None:
                raise AmbiguousWriteError(
                    f"whether the closing claim of distributed transaction {self.id} "
                    "landed is still unknown (reading it back failed); nothing was done"
                )
            if landed:
                return True
            forget_unsettled(storage, self.claim)
        now = now_millis()
        claim = TransactionDef()
        claim.CopyFrom(self.tdef)
        claim.id = self.id + CLAIM_SUFFIX
        claim.running_root_node_file_path = claim.beginning_root_node_file_path
        claim.began_at_millis = now
        claim.expire_at_millis = now + 1
        return create_settled(
            self.engine.storage,
            self.claim,
            encode_transaction_def(claim),
            f"the closing claim of distributed transaction {self.id}",
        )

    def _release_claim(self) -> None:
        """After a commit that failed and did not land: others may commit or abort."""
        try:
            self.engine.storage.delete(self.claim)
        except TrinityError as exc:
            log.warning("could not remove the closing claim %s: %s", self.claim, exc)

    def _check_committed_elsewhere(self, after: int) -> None:
        """TransactionClosedError "already committed as version N" when a version above
        `after` is this transaction's."""
        version = self._committed_elsewhere(after)
        if version is not None:
            self._committed(version)
            raise TransactionClosedError(
                f"distributed transaction {self.id} was already committed as version "
                f"{version} (by another process, at the same time); nothing more landed"
            )

    def _committed_elsewhere(self, after: int) -> int | None:
        """The version above `after` that committed this transaction (`committed_as`)."""
        return committed_as(self.engine, self.tdef, after)

    def _stored_state(self) -> str:
        """What the transaction file holds now: "mine" (this transaction's, or a file
        too damaged to tell, as an existence check took it before), "gone", or "other"
        (the id was begun again after this transaction closed: never acted on)."""
        storage = self.engine.storage
        try:
            data = storage.read(self.location)
        except StorageFileNotFoundError:
            return "gone"
        try:
            stored = decode_transaction_def(
                data, self.location, lifetime_bound(self.base.lakehouse_def)
            )
        except CorruptFileError:
            return "mine"
        return "mine" if began(stored) == began(self.tdef) else "other"

    def _closed_before(self, what: str) -> TrinityError:
        """The error for a handle whose transaction closed and whose id was begun again:
        TransactionClosedError "committed as version N" when its commit is found, else
        TransactionNotFoundError (it was aborted)."""
        version = self._committed_elsewhere(self.base.version)
        if version is not None:
            self._committed(version)
            return TransactionClosedError(
                f"distributed transaction {self.id} was committed as version {version} "
                f"(the id was begun again since); it cannot be {what}"
            )
        self.closed = True
        return TransactionNotFoundError(
            f"distributed transaction {self.id} was aborted elsewhere (the id was begun "
            f"again since); it cannot be {what}"
        )

    def _remove_stored(self, version: int) -> None:
        try:
            self.engine.storage.delete(self.location)
        except TrinityError as exc:  # committed: a leftover file must not say otherwise
            log.warning(
                "committed %s as version %d but could not remove %s: %s",
                self.id,
                version,
                self.location,
                exc,
            )

    def abort(self) -> None:
        """Forget the transaction everywhere: its stored state is deleted (unless a
        commit with an unknown outcome turns out to have landed: TransactionClosedError).
        A commit and an abort both create the closing claim first (one of them does):
        when another process committed the transaction, or is committing it right now,
        TransactionClosedError says so (it cannot be undone); aborted elsewhere, this
        abort is a no-op."""
        with self.lock:
            if self.committed_version is not None and self._stored_state() == "mine":
                self._remove_stored(self.committed_version)  # a leftover, if any
            self._refuse_abort_if_committed()
            # the handle is closed only once the abort took effect (or had, elsewhere):
            # refused (another process is committing it) or failed, it stays as it was
            if self._abort_stored():
                self._forget()

    def _abort_stored(self) -> bool:
        """The stored side of `abort`: True once the transaction is aborted (here or
        elsewhere, or was aborted before). TransactionClosedError when another process
        committed it (the handle is then marked committed as that version) or holds its
        closing claim with the transaction still stored (the handle is kept)."""
        storage = self.engine.storage
        for _ in range(3):
            if self._take_claim():
                state = self._stored_state()
                if state == "other":
                    self._release_claim()  # the claim of the transaction begun again
                    error = self._closed_before("aborted")
                    if isinstance(error, TransactionClosedError):
                        raise error
                    return True  # aborted before: aborting again changes nothing
                if state == "gone":
                    self._refuse_if_committed_elsewhere()
                    return True  # aborted elsewhere
                storage.delete(self.location)
                return True
            # another commit or abort holds the claim: the file first (a commit
            # lands its root before it removes the file), then the roots
            stored = storage.exists(self.location)
            self._refuse_if_committed_elsewhere()
            if not storage.exists(self.claim):
                continue  # a commit that failed released it: try again
            if stored:
                raise TransactionClosedError(
                    f"distributed transaction {self.id} is being committed by another "
                    "process; it cannot be aborted now (abort again to learn the outcome; "
                    "this handle keeps its changes)"
                    + stale_claim_advice(self.engine, self.id, self.base.lakehouse_def, "aborted")
                )
            return True  # aborted elsewhere
        raise TransactionClosedError(
            f"distributed transaction {self.id} is being committed by other processes, "
            "which keep failing; abort again (this handle keeps its changes)"
        )

    def _refuse_if_committed_elsewhere(self) -> None:
        """TransactionClosedError "committed as version N by another process" when a
        version names this transaction; the handle then says so too."""
        version = self._committed_elsewhere(self.base.version)
        if version is not None:
            self._committed(version)
            raise TransactionClosedError(
                f"distributed transaction {self.id} was committed as version {version} by "
                "another process; it cannot be aborted"
            )
