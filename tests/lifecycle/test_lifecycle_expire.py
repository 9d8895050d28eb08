"""Version expiration and garbage collection."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from expire_clock import expiring_later
from lifecycle_helpers import (
    FAST_TREE,
    NO_FSYNC,
    SMALL_TREE,
    CrashingStorage,
    SimulatedCrash,
    copy_store,
    fast_history,
    files_of,
    files_under,
    make_history,
    read_fully,
)

from trinityfs import Lakehouse
from trinityfs.errors import (
    InvalidArgumentError,
    TransactionExpiredError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.paths import OLDEST_VERSION, root_node_file
from trinityfs.lifecycle import expire as lifecycle_expire
from trinityfs.lifecycle.inventory import classify

AGGRESSIVE = {"max_age_millis": 0, "min_versions": 2, "grace_millis": 0}


def _path(lake: Lakehouse) -> str:
    return lake.storage.url[len("file://") :]


def _kept_versions_read(lake: Lakehouse) -> dict[int, dict]:
    return {v: read_fully(lake, v) for v in range(lake.oldest_version(), lake.latest_version() + 1)}


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC, **SMALL_TREE)
    make_history(lake, 50, tables=30)
    return lake


def test_retention_from_properties_and_overrides(tmp_path) -> None:
    lake = Lakehouse.create(
        str(tmp_path / "lake"),
        storage_options=NO_FSYNC,
        properties={"version.min-versions-to-keep": "5", "version.max-age-millis": "0"},
        **SMALL_TREE,
    )
    make_history(lake, 20)
    latest = lake.latest_version()
    with expiring_later():
        report = lake.expire(grace_millis=0)
    assert report.policy.min_versions == 5 and report.policy.max_age_millis == 0
    assert lake.oldest_version() == latest - 4 == report.oldest_version
    assert [v.version for v in lake.versions()] == list(range(latest - 4, latest + 1))
    assert report.roots_removed == latest - 4
    with expiring_later():
        report = lake.expire(min_versions=2, grace_millis=0)  # per-call override
    assert lake.oldest_version() == latest - 1
    with pytest.raises(VersionNotFoundError):
        lake.at(latest - 2)
    with pytest.raises(InvalidArgumentError):
        lake.expire(min_versions=0)


def test_max_age_keeps_recent_versions(lake) -> None:
    boundary = lake.latest_version()
    time.sleep(1.0)  # a one-second gap between the boundary and the recent versions
    make_history(lake, 10)
    latest = lake.latest_version()
    # the cutoff falls half a second before the first recent version, whatever the load
    first_recent = lake.version_info(boundary + 1).created_at_millis
    later = 600_000  # expiration runs ten minutes later (past the grace floor)
    max_age = int(time.time() * 1000) + later - first_recent + 500
    with expiring_later(minutes=later / 60_000):
        report = lake.expire(max_age_millis=max_age, min_versions=1, grace_millis=0)
    assert report.kept_by == "retention"
    assert lake.oldest_version() == boundary + 1
    assert len(lake.versions()) == latest - boundary
    # defaults: 7 days of history are all kept
    with expiring_later():
        assert lake.expire(grace_millis=0).files_removed == 0


def test_dry_run_lists_exactly_what_a_run_removes(lake) -> None:
    lake.export("pin", version=20)
    make_history(lake, 20)
    before = files_under(_path(lake))
    with expiring_later():
        dry = lake.expire(dry_run=True, **AGGRESSIVE)
    assert files_under(_path(lake)) == before, "a dry run changes nothing"
    assert not lake.storage.exists(OLDEST_VERSION)
    assert dry.dry_run and dry.files_removed > 0
    assert dry.bytes_removed == sum(before[f.location] for f in dry.removed)
    kinds = dry.removed_by_kind()
    assert kinds["root"]["files"] == dry.oldest_version == lake.latest_version() - 1
    assert {"node", "definition"} <= set(kinds)
    with expiring_later():
        real = lake.expire(**AGGRESSIVE)
    assert sorted(f.location for f in real.removed) == sorted(f.location for f in dry.removed)
    after = files_under(_path(lake))
    assert set(before) - set(after) == {f.location for f in dry.removed}
    assert read_fully(lake, export="pin")


def test_marker_is_written_first(lake, tmp_path) -> None:
    storage = CrashingStorage(lake.storage.url, budget=10**9)
    with expiring_later():
        lifecycle_expire(Lakehouse(storage).engine, **AGGRESSIVE, threads=1)
    assert storage.log[0] == ("write", OLDEST_VERSION)
    assert all(op == "delete" for op, _ in storage.log[1:])
    deleted = [loc for _, loc in storage.log[1:]]
    roots = [loc for loc in deleted if classify(loc) == "root"]
    assert deleted[: len(roots)] == roots, "old roots go before the sweep"


def test_idempotent(lake) -> None:
    lake.export("pin", version=10)
    with expiring_later():
        first = lake.expire(**AGGRESSIVE)
    assert first.files_removed > 0
    state = files_under(_path(lake))
    with expiring_later():
        again = lake.expire(**AGGRESSIVE)
    assert again.files_removed == 0 and again.expired_versions == 0
    assert files_under(_path(lake)) == state
    assert _kept_versions_read(lake)
    assert read_fully(lake, export="pin")
    assert lake.fsck().ok


def _crash_fixture() -> tuple[Lakehouse, dict]:
    """A lakehouse with history, exports of every kind, a live distributed transaction,
    orphans of a dropped partial export, strangers' files, and what its latest version
    and exports read."""
    lake = Lakehouse.create(f"memory://pristine-{uuid.uuid4().hex}", **SMALL_TREE)
    make_history(lake, 20, tables=14)
    lake.export("m", version=6)
    lake.export("p", version=9, mode="partial", depth=1)
    lake.export("f", version=12, mode="full")
    lake.drop_export("p")  # its private nodes become garbage
    make_history(lake, 6, tables=18)
    dtxn = lake.begin_distributed()
    dtxn.create_table("ns", "pending")
    dtxn.save()
    lake.storage.write("0000/0000/0000/00000000-node-not-ours.arrow", b"?")  # wrong hash
    lake.storage.write("warehouse/ns/t0/metadata/00000.metadata.json", b"{}")
    expected = {
        "exports": {e: read_fully(lake, export=e) for e in ("m", "f")},
        "latest": read_fully(lake),
        "txn": dtxn.id,
    }
    return lake, expected


def _assert_healthy(url: str, expected: dict) -> None:
    lake = Lakehouse.open(url)
    report = lake.fsck()  # every kept version and export: trees, pointers, definitions
    assert report.ok, report.errors
    for name, content in expected["exports"].items():
        assert read_fully(lake, export=name) == content
    assert read_fully(lake) == expected["latest"]
    assert lake.storage.exists("warehouse/ns/t0/metadata/00000.metadata.json")
    assert lake.storage.exists("0000/0000/0000/00000000-node-not-ours.arrow")


def test_crash_at_every_step_then_rerun() -> None:
    """Expiration dies before each of its mutating requests in turn (the marker write,
    then every delete); each time the lakehouse still reads correctly, and a rerun ends
    in exactly the state of an uninterrupted run. (On memory:// so that the ~60 copies
    of the lakehouse are cheap; crash points do not depend on the store.)"""
    pristine, expected = _crash_fixture()
    options = {"max_age_millis": 0, "min_versions": 3, "grace_millis": 0, "threads": 1}
    reference = copy_store(pristine.storage, f"memory://reference-{uuid.uuid4().hex}")
    counting = CrashingStorage(reference.url, budget=10**9)
    with expiring_later():
        report = lifecycle_expire(Lakehouse(counting).engine, **options)
    steps = counting.mutations
    assert steps == report.files_removed + 1  # the marker, then one delete per file
    assert report.live_transactions == [expected["txn"]]
    assert {"root", "node", "definition"} <= set(report.removed_by_kind())
    final = files_of(reference)
    _assert_healthy(reference.url, expected)
    for k in range(steps):
        work = copy_store(pristine.storage, f"memory://crash{k}-{uuid.uuid4().hex}")
        with pytest.raises(SimulatedCrash), expiring_later():
            lifecycle_expire(Lakehouse(CrashingStorage(work.url, budget=k)).engine, **options)
        _assert_healthy(work.url, expected)  # a crash anywhere leaves a readable lakehouse
        with expiring_later():
            Lakehouse.open(work.url).expire(max_age_millis=0, min_versions=3, grace_millis=0)
        assert files_of(work) == final, f"rerun after a crash at step {k}"
        for loc in final:
            work.delete(loc)
    loaded = Lakehouse.open(reference.url).load_distributed(expected["txn"])
    assert loaded.commit() == Lakehouse.open(reference.url).latest_version()


def test_orphans_of_a_crashed_commit_are_reclaimed(lake, monkeypatch) -> None:
    from trinityfs.txn import transaction

    def die(*args, **kwargs):
        raise SimulatedCrash("process died before creating its root")

    before = files_under(_path(lake))
    with monkeypatch.context() as m:
        m.setattr(transaction, "create_root", die)
        with pytest.raises(SimulatedCrash), lake.transaction() as txn:
            for i in range(12):
                txn.create_table("ns", f"lost{i}")
    orphans = set(files_under(_path(lake))) - set(before)
    assert len(orphans) >= 12  # the definitions, and nodes of the flushes
    assert {f.location for f in lake.fsck().orphans} >= orphans
    # within the grace period they may belong to a running commit: spared
    spared = lake.expire(max_age_millis=0, min_versions=1)
    assert orphans <= {f.location for f in spared.spared_young}
    assert orphans <= set(files_under(_path(lake)))
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert orphans <= {f.location for f in report.removed}
    assert not orphans & set(files_under(_path(lake)))


def test_unknown_files_are_never_deleted(lake) -> None:
    strangers = {
        "warehouse/db/t/data/00000-0-a.parquet": b"PAR1",
        "warehouse/db/t/metadata/v1.metadata.json": b"{}",
        "README.txt": b"hello",
        "_exports_notes.txt": b"x",
        "0000/0000/0000/00000000-node-fake.arrow": b"not ours: wrong hash prefix",
        "1111/node-x.arrow": b"not an optimized path",
    }
    for loc, data in strangers.items():
        lake.storage.write(loc, data)
    with expiring_later():
        report = lake.expire(**AGGRESSIVE)
    assert set(strangers) <= {f.location for f in report.unknown_files}
    for loc, data in strangers.items():
        assert lake.storage.read(loc) == data
    assert set(strangers) <= {f.location for f in lake.fsck().unknown_files}


def test_unrecorded_export_leftovers(lake) -> None:
    storage = lake.storage
    storage.write("_export_ghost.arrow", storage.read(root_node_file(3)))
    storage.write("_exports/ghost/_oldest_version.txt", b"3")
    storage.write("_exports/ghost/" + root_node_file(3), storage.read(root_node_file(3)))
    storage.write("_exports/ghost/notes.md", b"a stranger's file inside")
    lake.export("real", mode="full")
    young = lake.expire(max_age_millis=0, min_versions=1)  # grace: all spared
    assert "_export_ghost.arrow" in {f.location for f in young.spared_young}
    with expiring_later():
        report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    removed = {f.location for f in report.removed}
    assert {"_export_ghost.arrow", "_exports/ghost/_oldest_version.txt"} <= removed
    assert storage.exists("_exports/ghost/notes.md")  # unknown: left
    assert not any(loc.startswith("_exports/real/") for loc in removed)
    assert read_fully(lake, export="real")


def test_writer_based_on_an_expired_version_loses_nothing(lake) -> None:
    """A stale transaction whose base and next version were expired must not report a
    commit nobody sees: it fails, and retrying it succeeds."""
    stale = lake.transaction()
    base = stale.version
    stale.create_table("ns", "late")
    make_history(lake, 10)
    latest = lake.latest_version()
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=2, grace_millis=0)  # roots base, base+1 gone
    assert not lake.storage.exists(root_node_file(base + 1))
    with pytest.raises(TransactionExpiredError, match="expired"):
        stale.commit()
    assert not lake.storage.exists(root_node_file(base + 1)), "no invisible root left"
    assert lake.latest_version() == latest
    assert "late" not in lake.list_tables("ns")
    with lake.transaction() as retry:
        retry.create_table("ns", "late")
    assert "late" in lake.list_tables("ns")
    assert lake.fsck().ok


def test_writer_whose_base_alone_was_expired_commits_or_fails_cleanly(lake) -> None:
    """Root base+1 exists, so the stale commit replays and must validate against
    versions base+1..latest, which reads root base. A process that still holds that
    root (cached; roots are immutable) validates correctly and commits; one that does
    not fails. Either way nothing is lost or half-done."""
    stale = lake.transaction()
    base = stale.version
    stale.create_table("ns", "late")
    lake.create_table("ns", "winner")
    make_history(lake, 3)
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=4, grace_millis=0)
    assert lake.oldest_version() == base + 1
    other_process = Lakehouse.open(lake.url)  # no cached roots
    elsewhere = other_process.transaction(version=base + 1)
    try:
        stale.commit()
    except TrinityError:
        assert "late" not in lake.list_tables("ns")
    else:
        assert {"late", "winner"} <= set(lake.list_tables("ns"))
    elsewhere.create_table("ns", "late2")
    lake.create_table("ns", "x")
    with expiring_later():
        lake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    with pytest.raises(TrinityError):  # its base, base+1, is gone: cannot validate
        elsewhere.commit()
    assert "late2" not in lake.list_tables("ns")
    assert lake.fsck().ok


def test_grace_protects_running_transactions(tmp_path) -> None:
    """With a grace period longer than a transaction, the transaction commits normally
    even if expiration ran since it began: its base and everything newer are kept."""
    lake = Lakehouse.create(
        str(tmp_path / "lake"), storage_options=NO_FSYNC, txn_ttl_millis=2000, **SMALL_TREE
    )
    make_history(lake, 50, tables=30)
    time.sleep(2.6)  # the history is now older than the grace period (and its margin)
    running = lake.transaction()
    base = running.version
    running.create_table("ns", "slow")
    make_history(lake, 5)
    report = lake.expire(max_age_millis=0, min_versions=1, grace_millis=300)
    assert report.policy.grace_millis == 2000  # the floor: the txn TTL
    assert report.kept_by == "grace" and report.oldest_version == base
    version = running.commit()
    assert "slow" in lake.at(version).list_tables("ns")
    assert lake.fsck().ok


def test_transactions_older_than_the_ttl_are_refused(tmp_path) -> None:
    lake = Lakehouse.create(
        str(tmp_path / "lake"), storage_options=NO_FSYNC, txn_ttl_millis=50, **SMALL_TREE
    )
    lake.create_namespace("ns")
    txn = lake.transaction()
    txn.create_table("ns", "t")
    time.sleep(0.1)
    with pytest.raises(TransactionExpiredError, match="txn_ttl_millis"):
        txn.commit()


@pytest.mark.slow
def test_expire_10000_versions_with_exports(tmp_path) -> None:
    started = time.monotonic()
    path = str(tmp_path / "big")
    lake = Lakehouse.create(path, storage_options=NO_FSYNC, **FAST_TREE)
    fast_history(lake, 3000)
    lake.export("minimal-3000")
    fast_history(lake, 3000)
    lake.export("partial-6000", mode="partial", depth=1)
    fast_history(lake, 3000)
    lake.export("full-9000", mode="full")
    fast_history(lake, 1000)
    latest = lake.latest_version()
    assert latest >= 10_000
    build = time.monotonic() - started
    exports = {e.name: read_fully(lake, export=e.name) for e in lake.exports()}
    files_before = files_under(path)

    # commits faster than one per millisecond run created_at_millis ahead of the clock
    # (it stays monotonic): let the clock catch up so both runs see the same past
    ahead = lake.version_info(latest).created_at_millis - time.time() * 1000
    time.sleep(max(0.0, ahead / 1000) + 0.05)
    fresh = Lakehouse.open(path, storage_options=NO_FSYNC)  # cold caches: real requests
    with expiring_later():
        dry = fresh.expire(max_age_millis=0, min_versions=3, grace_millis=0, dry_run=True)
    with expiring_later():
        report = fresh.expire(max_age_millis=0, min_versions=3, grace_millis=0)
    assert report.oldest_version == latest - 2 == fresh.oldest_version()
    assert report.roots_removed == latest - 2
    assert report.files_removed == dry.files_removed
    assert report.requests["delete"] == report.files_removed
    # marking reads each distinct live node once (plus the 3 kept roots), not a tree
    # per version; the other reads are the markers and the retention binary search
    assert report.marked["node_reads"] == report.marked["nodes"] + 3
    assert report.requests["read"] <= report.marked["node_reads"] + 50
    files_after = files_under(path)
    assert len(files_after) < len(files_before) // 3
    for name, content in exports.items():
        assert read_fully(fresh, export=name) == content
    _kept_versions_read(fresh)
    assert fresh.fsck().ok
    with expiring_later():
        assert fresh.expire(max_age_millis=0, min_versions=3, grace_millis=0).files_removed == 0
    elapsed = time.monotonic() - started
    print(
        f"\n10k versions: build {build:.1f}s, expire {report.elapsed_seconds:.2f}s, "
        f"total {elapsed:.1f}s, removed {report.files_removed} files "
        f"({report.bytes_removed} B), requests {report.requests['requests']}"
    )
    assert os.path.isdir(os.path.join(path, "_exports", "full-9000"))
