"""b3cf087 bounded a distributed transaction's lifetime at 30 days. A lakehouse created with
a longer txn_ttl_millis (allowed at create, and by FORMAT.md) could then begin no
distributed transaction at all (InvalidArgumentError for its own default TTL), and its
honest transaction files with such lifetimes read as CorruptFileError: load refused them
and expiration no longer kept their base version. The bound is now 30 days or the
lakehouse's own txn_ttl_millis when longer; beyond that a file is still refused."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, InvalidArgumentError
from trinityfs.format.paths import transaction_location
from trinityfs.lifecycle import dtxn

DAY = 86_400_000
NO_FSYNC = {"fsync": False}


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(
        str(tmp_path / "lake"), storage_options=NO_FSYNC, txn_ttl_millis=60 * DAY
    )
    lake.create_namespace("ns")
    return lake


def test_a_sixty_day_lakehouse_begins_loads_and_commits(lake):
    txn = lake.begin_distributed(txn_id="long")
    assert txn.expire_at_millis - txn.began_at_millis == 60 * DAY
    txn.create_table("ns", "t")
    txn.save()
    again = Lakehouse.open(lake.url, storage_options=NO_FSYNC).load_distributed("long")
    version = again.commit()
    assert lake.latest_version() == version and lake.list_tables("ns") == ["t"]


def test_expiration_keeps_the_base_of_a_sixty_day_transaction(lake):
    lake.create_table("ns", "t0")
    lake.begin_distributed(txn_id="long")
    base = lake.latest_version()
    for i in range(3):
        lake.create_table("ns", f"t{i + 1}")
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0, dry_run=True)
    assert report.oldest_version == base and report.kept_by == "transaction"
    assert lake.fsck().ok


def test_beyond_the_lakehouse_ttl_is_still_refused(lake):
    with pytest.raises(InvalidArgumentError, match="at most"):
        lake.begin_distributed(ttl_millis=61 * DAY)
    txn = lake.begin_distributed(txn_id="forged")
    location = transaction_location("forged")
    tdef = dtxn.decode_transaction_def(lake.storage.read(location), location, 60 * DAY)
    tdef.expire_at_millis = txn.began_at_millis + 90 * DAY
    lake.storage.write(location, dtxn.encode_transaction_def(tdef))
    with pytest.raises(CorruptFileError, match="maximum lifetime"):
        lake.load_distributed("forged")
