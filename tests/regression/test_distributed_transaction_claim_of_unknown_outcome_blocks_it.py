"""A closing claim (docs/FORMAT-CHOICES.md "Closing a distributed transaction") whose
create had an unknown outcome (AmbiguousWriteError: the create landed, reading it back
failed) blocked the transaction: the commit retried with new claim bytes, found the
claim there and was told "being committed by another process", although the claim was
its own; so was every later commit and abort, until expiration removed the claim. Now
the process settles its earlier claim first (as `begin` settles its own file) and the
retried commit lands.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, StorageError
from trinityfs.format.paths import transaction_location
from trinityfs.storage.core import Storage

NO_FSYNC = {"fsync": False}
CLAIM = transaction_location("t1~closing")


def test_a_commit_retried_after_an_unknown_claim_lands(tmp_path, monkeypatch) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "a")
    txn.save()
    real_create, real_read = Storage.create_if_absent, Storage.read

    def landed_but_unanswered(self, loc, data, **kwargs):
        created = real_create(self, loc, data, **kwargs)
        if loc == CLAIM:
            raise AmbiguousWriteError(f"timed out creating {loc}")
        return created

    def unreadable(self, loc, *args, **kwargs):
        if loc == CLAIM:
            raise StorageError(f"timed out reading {loc}")
        return real_read(self, loc, *args, **kwargs)

    monkeypatch.setattr(Storage, "create_if_absent", landed_but_unanswered)
    monkeypatch.setattr(Storage, "read", unreadable)
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    monkeypatch.undo()
    assert lake.storage.exists(CLAIM)
    version = txn.commit()
    assert "a" in Lakehouse.open(lake.url, storage_options=NO_FSYNC).at(version).list_tables("ns")
