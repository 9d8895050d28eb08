"""A lease that holds expiration back while an export writes files nothing references yet.

A full export copies a whole version into `_exports/<name>/` and a partial one writes
private node copies, all before its record lands. Expiration spares such files only
while they are younger than its grace period, which may be as short as the commit
window: an export slower than that lost its files and failed. A bulk load has the same
problem and holds a lease (trinityfs/catalog/bulk.py); an export now holds the same
kind: a distributed-transaction file whose id starts with BULK_LEASE_PREFIX, begun on
the latest version, renewed every third of its TTL while files are written, deleted
when the export ends. While it is live, expiration keeps its base version and every
file written since the lease began (trinityfs/lifecycle/expire.py `_sweep_cutoff`).
A crashed export leaves a lease that lapses; expiration removes it after the grace.
An export whose lease lapsed or vanished fails before its record is committed, and
every file an export wrote is checked again after its record landed
(`exports._check_files_kept`): a lease is protection, never the proof.
"""

from __future__ import annotations

import contextlib
import threading
import uuid

from trinityfs.errors import TransactionExpiredError, TransactionNotFoundError, TrinityError
from trinityfs.format.paths import transaction_location
from trinityfs.format.trinitylake_pb2 import TransactionDef
from trinityfs.lifecycle import dtxn
from trinityfs.lifecycle.dtxn_files import encode_transaction_def
from trinityfs.lifecycle.expire import BULK_LEASE_PREFIX
from trinityfs.txn.engine import Engine, now_millis

#: how long a lease lasts without renewal (a bulk load's default)
LEASE_MILLIS = 10 * 60 * 1000


def started_on_the_store_clock(engine: Engine, tdef: TransactionDef) -> TransactionDef:
    """A lease just begun, its start on the store's clock (also a bulk load's lease).

    Expiration compares a lease's began_at_millis with store mtimes: when this process's
    clock runs ahead of the store's, the start is lowered to the store's time of the
    lease file (one stat) and rewritten, so that what is written from now on is younger
    than the lease's start on either clock. Best effort: `tdef` as it is when the stat
    or the write fails."""
    location = transaction_location(tdef.id)
    try:
        mtime = engine.storage.mtime(location)
    except (TrinityError, OSError):
        return tdef
    if mtime is None or int(mtime * 1000) >= tdef.began_at_millis:
        return tdef
    lease = TransactionDef()
    lease.CopyFrom(tdef)
    lease.began_at_millis = int(mtime * 1000)
    try:
        engine.storage.write(location, encode_transaction_def(lease))
    except TrinityError:
        return tdef
    return lease


class Lease:
    """A live lease on the latest version, for `what` (part of its id)."""

    def __init__(self, engine: Engine, what: str, ttl_millis: int | None = None):
        ttl_millis = LEASE_MILLIS if ttl_millis is None else ttl_millis
        txn = dtxn.begin(
            engine, ttl_millis=ttl_millis, txn_id=f"{BULK_LEASE_PREFIX}{what}-{uuid.uuid4()}"
        )
        self.engine = engine
        self.tdef: TransactionDef = txn.tdef
        self.location = transaction_location(self.tdef.id)
        self.ttl_millis = ttl_millis
        self._renewed = now_millis()
        self._lock = threading.Lock()
        self._start_on_the_store_clock()

    def _start_on_the_store_clock(self) -> None:
        self.tdef = started_on_the_store_clock(self.engine, self.tdef)

    def renew(self, *, force: bool = False) -> None:
        """Extend the lease when a third of its TTL passed (`force`: check it now).
        TransactionExpiredError once it lapsed or its file is gone (as a bulk load's):
        expiration may have swept what was written under it."""
        with self._lock:
            now = now_millis()
            if not force and now - self._renewed < self.ttl_millis // 3:
                return
            if now >= self.tdef.expire_at_millis:
                raise TransactionExpiredError(
                    f"lease {self.tdef.id} lapsed {now - self.tdef.expire_at_millis} ms ago "
                    "(the process was stopped, or reading took longer than its TTL): "
                    "expiration may have removed what was written under it; nothing was "
                    "recorded"
                )
            storage = self.engine.storage
            if not storage.exists(self.location):
                raise TransactionNotFoundError(
                    f"lease {self.tdef.id} was removed (aborted or committed as a distributed "
                    "transaction elsewhere?): expiration may have removed what was written "
                    "under it; nothing was recorded"
                )
            lease = TransactionDef()
            lease.CopyFrom(self.tdef)
            lease.expire_at_millis = now + self.ttl_millis
            storage.write(self.location, encode_transaction_def(lease))
            self.tdef, self._renewed = lease, now

    def drop(self) -> None:
        """Delete the lease file (best effort: a lease left behind lapses)."""
        with contextlib.suppress(TrinityError):
            self.engine.storage.delete(self.location)
