"""Distributed transactions: begin, save, load elsewhere, add, commit anywhere, expiry."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import (
    NO_FSYNC,
    SMALL_TREE,
    dtxn_add,
    dtxn_begin,
    dtxn_commit,
    make_history,
    read_fully,
)

from trinityfs import Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    CommitConflictError,
    InvalidArgumentError,
    TransactionExpiredError,
    TransactionNotFoundError,
)
from trinityfs.format.paths import transaction_location


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 12, tables=8)
    return lake


def _run(ctx, target, *args):
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    try:
        result = out.get(timeout=120)
    finally:
        proc.join(timeout=60)
    assert proc.exitcode == 0
    return result


def test_three_processes(lake) -> None:
    """Begin and save in one process, load and add in a second, commit in a third."""
    url = lake.storage.url
    ctx = multiprocessing.get_context("spawn")
    before = lake.latest_version()
    txn_id = _run(ctx, dtxn_begin, url)
    assert lake.latest_version() == before, "nothing is visible before the commit"
    assert not lake.snapshot().namespace_exists("dist")
    seen_by_b = _run(ctx, dtxn_add, url, txn_id)
    assert seen_by_b == ["from_a"]
    lake.create_table("ns", "meanwhile")  # a concurrent commit: the txn replays onto it
    seen_by_c, version = _run(ctx, dtxn_commit, url, txn_id)
    assert seen_by_c == ["from_a", "from_b"]
    assert version == lake.latest_version() == before + 2
    view = lake.at(version)
    assert view.list_tables("dist") == ["from_a", "from_b"]
    assert view.describe_namespace("dist").properties["touched_by"] == "b"
    assert "meanwhile" in view.list_tables("ns")
    assert not lake.storage.exists(transaction_location(txn_id))
    with pytest.raises(TransactionNotFoundError):
        lake.load_distributed(txn_id)
    assert lake.fsck().ok


def test_save_and_load_in_process(lake) -> None:
    txn = lake.begin_distributed(isolation="SERIALIZABLE", ttl_millis=60_000)
    assert txn.expire_at_millis - txn.began_at_millis == 60_000
    txn.create_table("ns", "new", {"properties": {"a": "1"}})
    txn.drop_table("ns", "t1")
    txn.save()
    again = lake.load_distributed(txn.id)
    # the dependencies travel: a serializable commit elsewhere validates the same reads
    assert again.txn.deps == txn.txn.deps and again.txn.deps.read_keys
    assert again.txn.pending == txn.txn.pending
    assert again.version == txn.version
    assert again.txn.isolation == txn.txn.isolation
    assert again.describe_table("ns", "new").properties["a"] == "1"
    assert "t1" not in again.list_tables("ns")
    again.replace_table("ns", "new", {"properties": {"a": "2"}})
    version = again.commit()
    assert lake.at(version).describe_table("ns", "new").properties["a"] == "2"
    assert "t1" not in lake.list_tables("ns")
    with pytest.raises(TransactionNotFoundError):
        txn.commit()  # committed elsewhere


def test_conflicts_are_validated_by_the_loading_process(lake) -> None:
    txn = lake.begin_distributed()
    lake.create_namespace("gone")
    txn2 = lake.begin_distributed()
    txn2.create_table("gone", "x")  # needs namespace "gone" to survive
    txn2.save()
    lake.drop_namespace("gone")
    loaded = lake.load_distributed(txn2.id)
    with pytest.raises(CommitConflictError, match="gone"):
        loaded.commit()
    txn.create_table("ns", "t3_clash")
    txn.replace_table("ns", "t2", {"properties": {"mine": "1"}})
    txn.save()
    lake.replace_table("ns", "t2", {"properties": {"theirs": "1"}})
    with pytest.raises(CommitConflictError, match="changed by version"):
        lake.load_distributed(txn.id).commit()


def test_lakehouse_def_change_travels(lake) -> None:
    txn = lake.begin_distributed()
    ldef = txn.lakehouse_def
    ldef.properties["owner"] = "team-a"
    txn.set_lakehouse_def(ldef)
    txn.save()
    version = lake.load_distributed(txn.id).commit()
    assert lake.lakehouse_def(version).properties["owner"] == "team-a"


def test_expiry(lake) -> None:
    txn = lake.begin_distributed(ttl_millis=300)
    txn.create_table("ns", "late")
    txn.save()
    loaded = lake.load_distributed(txn.id)
    time.sleep(0.35)
    with pytest.raises(TransactionExpiredError, match="expired"):
        lake.load_distributed(txn.id)
    with pytest.raises(TransactionExpiredError, match="expired"):
        loaded.commit()
    with pytest.raises(TransactionExpiredError, match="expired"):
        txn.save()
    assert "late" not in lake.list_tables("ns")
    # expiration removes it once it is expired for longer than the grace period
    with expiring_later():
        report = lake.expire(grace_millis=0)
    assert transaction_location(txn.id) in {f.location for f in report.removed}
    with pytest.raises(TransactionNotFoundError):
        lake.load_distributed(txn.id)


def test_expiration_keeps_what_a_live_transaction_needs(lake) -> None:
    txn = lake.begin_distributed()
    base = txn.version
    txn.create_table("ns", "pending")
    txn.save()
    make_history(lake, 10)
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert report.oldest_version == base and report.kept_by == "transaction"
    assert report.live_transactions == [txn.id]
    version = lake.load_distributed(txn.id).commit()
    assert "pending" in lake.at(version).list_tables("ns")
    read_fully(lake, version)
    with expiring_later():
        after = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert after.oldest_version == version
    assert lake.fsck().ok and not lake.fsck().orphans


def test_abort_and_ids(lake) -> None:
    txn = lake.begin_distributed(txn_id="nightly-load")
    assert txn.id == "nightly-load"
    with pytest.raises(AlreadyExistsError):
        lake.begin_distributed(txn_id="nightly-load")
    with pytest.raises(InvalidArgumentError):
        lake.begin_distributed(ttl_millis=0)
    txn.create_table("ns", "x")
    txn.save()
    lake.load_distributed("nightly-load").abort()
    with pytest.raises(TransactionNotFoundError):
        lake.load_distributed("nightly-load")
    with pytest.raises(TransactionNotFoundError):
        lake.load_distributed("never-begun")


def test_context_manager(lake) -> None:
    with lake.begin_distributed() as txn:
        txn.create_table("ns", "via_with")
    assert "via_with" in lake.list_tables("ns")
    keep = lake.begin_distributed()
    keep.create_table("ns", "saved")
    keep.save()
    with pytest.raises(RuntimeError), lake.load_distributed(keep.id) as txn:
        txn.create_table("ns", "unsaved")
        raise RuntimeError("boom")
    loaded = lake.load_distributed(keep.id)  # the saved state survived the failure
    assert "saved" in loaded.list_tables("ns")
    assert "unsaved" not in loaded.list_tables("ns")
