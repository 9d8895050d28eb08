"""Distributed transaction ids and lifetimes.

(1) Ids were not NFC-normalised: 'ü' spelled NFC and NFD (which print the same) named
two transactions (two files), and a store that normalises names (macOS-like) would map
them onto one file. Now a new id must be in NFC (InvalidNameError naming the spelling to
use) and `load` finds a transaction by either spelling.
(2) `expire_at_millis` had no upper bound: a transaction file saying 2**62 (checksummed,
so it decoded) pinned its base version against expiration for ever. Now a lifetime above
MAX_TXN_LIFETIME_MILLIS (from `begin`, or read from a file) is refused with a typed error
and such a file pins nothing.
"""

from __future__ import annotations

import unicodedata

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, InvalidArgumentError, InvalidNameError
from trinityfs.format.paths import transaction_location
from trinityfs.lifecycle import dtxn

NO_FSYNC = {"fsync": False}
NFC = unicodedata.normalize("NFC", "tx-\u00fc")
NFD = unicodedata.normalize("NFD", NFC)


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    return lake


def test_nfd_id_refused_at_begin_naming_the_nfc_spelling(lake) -> None:
    assert NFC != NFD
    with pytest.raises(InvalidNameError, match="NFC"):
        lake.begin_distributed(txn_id=NFD)
    assert not lake.storage.exists(transaction_location(NFD))


def test_both_spellings_load_one_transaction(lake) -> None:
    txn = lake.begin_distributed(txn_id=NFC)
    txn.create_namespace("dist")
    txn.save()
    again = lake.load_distributed(NFD)
    assert again.id == NFC
    again.commit()
    assert lake.snapshot().namespace_exists("dist")


def test_begin_refuses_a_ttl_beyond_the_maximum_lifetime(lake) -> None:
    with pytest.raises(InvalidArgumentError, match="maximum"):
        lake.begin_distributed(ttl_millis=dtxn.MAX_TXN_LIFETIME_MILLIS + 1)
    txn = lake.begin_distributed(ttl_millis=dtxn.MAX_TXN_LIFETIME_MILLIS)
    txn.abort()


def _forge_expiry(lake: Lakehouse, txn_id: str, expire_at: int) -> None:
    location = transaction_location(txn_id)
    tdef = dtxn.decode_transaction_def(lake.storage.read(location), location)
    tdef.expire_at_millis = expire_at
    lake.storage.write(location, dtxn.encode_transaction_def(tdef))


def test_forged_far_expiry_refused_at_load_and_pins_nothing(lake) -> None:
    lake.create_table("ns", "t0")
    lake.begin_distributed(txn_id="honest", ttl_millis=3_600_000)
    base = lake.latest_version()
    for i in range(4):
        lake.create_table("ns", f"t{i + 1}")
    with expiring_later():  # the control: a live transaction keeps its base
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0, dry_run=True)
    assert report.oldest_version == base and report.kept_by == "transaction"
    _forge_expiry(lake, "honest", 2**62)
    with pytest.raises(CorruptFileError, match="maximum lifetime"):
        lake.load_distributed("honest")
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert report.oldest_version > base, "a forged expire_at_millis kept the base version"


def test_lifetime_at_the_maximum_still_loads(lake) -> None:
    txn = lake.begin_distributed(txn_id="long", ttl_millis=60_000)
    _forge_expiry(lake, "long", txn.began_at_millis + dtxn.MAX_TXN_LIFETIME_MILLIS)
    assert lake.load_distributed("long").expire_at_millis == (
        txn.began_at_millis + dtxn.MAX_TXN_LIFETIME_MILLIS
    )


def test_a_renewed_lease_older_than_the_maximum_still_loads(lake) -> None:
    """A bulk load's lease (catalog/bulk.py) renews expire_at_millis, not began_at_millis:
    only the expiry ahead of now is bounded."""
    lake.begin_distributed(txn_id="lease", ttl_millis=60_000)
    location = transaction_location("lease")
    tdef = dtxn.decode_transaction_def(lake.storage.read(location), location)
    tdef.began_at_millis -= 2 * dtxn.MAX_TXN_LIFETIME_MILLIS
    lake.storage.write(location, dtxn.encode_transaction_def(tdef))
    assert lake.load_distributed("lease").id == "lease"
