"""`DistributedTransaction`: a catalog transaction that outlives its process.

Begun with `Lakehouse.begin_distributed()`, saved with `save()`, continued anywhere
with `Lakehouse.load_distributed(id)`, committed from any process before it expires.
It offers every read and write method of `CatalogTransaction`.
"""

from __future__ import annotations

from trinityfs.catalog.writer import CatalogTransaction
from trinityfs.lifecycle.dtxn import DistributedTxn


class DistributedTransaction(CatalogTransaction):
    """A `CatalogTransaction` with an id, `save()`, and an expiry time.

    As a context manager, leaving the block commits; an exception only drops this
    process's unsaved changes (the saved transaction stays loadable elsewhere).
    `abort()` deletes the transaction for every process.
    """

    txn: DistributedTxn

    def __init__(self, txn: DistributedTxn):
        super().__init__(txn)

    @property
    def id(self) -> str:
        return self.txn.id

    @property
    def began_at_millis(self) -> int:
        return self.txn.began_at_millis

    @property
    def expire_at_millis(self) -> int:
        return self.txn.expire_at_millis

    def save(self) -> None:
        """Store the changes made so far so that another process can load them."""
        self.txn.save()

    def __enter__(self) -> DistributedTransaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            with self.txn.lock:  # after a commit another thread may be running
                self.txn.closed = True  # unsaved changes are dropped; the stored state stays

    def __repr__(self) -> str:
        return f"DistributedTransaction({self.id!r}, base version {self.version})"
