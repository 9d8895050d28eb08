"""Bulk load (issue 13 item 5): many creates as one version in bounded memory, with the
guarantees of a transaction (atomic, conflicts, expiration, verifiable files)."""

from __future__ import annotations

import os
import re
import tracemalloc

import pytest
from expire_clock import expiring_later

import trinityfs.catalog.bulk as bulk_module
import trinityfs.catalog.bulk_root as bulk_root_module
from trinityfs import Lakehouse
from trinityfs.errors import (
    AlreadyExistsError,
    AmbiguousWriteError,
    CommitConflictError,
    NamespaceNotFoundError,
    StorageError,
    TransactionClosedError,
    TransactionExpiredError,
    TransactionNotFoundError,
)
from trinityfs.format.integrity import verify_named_content
from trinityfs.format.paths import transaction_location


def _files(lake: Lakehouse) -> set[str]:
    return {entry.location for entry in lake.storage.list("")}


@pytest.fixture
def blake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    return lake


def _definitions(lake: Lakehouse) -> set[str]:
    return {f for f in _files(lake) if "table-" in f or "view-" in f}


def test_bulk_load_commits_every_create_as_one_version(blake) -> None:
    before = blake.latest_version()
    with blake.bulk_load() as load:
        load.create_namespace("other", {"owner": "me"})
        for i in range(500):
            load.create_table("ns", f"t{(i * 7919) % 500:04d}", {"table_format": "ICEBERG"})
        load.create_view("other", "v")
        load.create_table("other", "t")
    assert load.committed_version == before + 1 == blake.latest_version()
    assert len(blake.list_tables("ns")) == 500
    assert blake.list_tables("other") == ["t"] and blake.list_views("other") == ["v"]
    assert blake.snapshot().namespace_properties("other") == {"owner": "me"}
    assert blake.describe_table("ns", "t0042").table_format == "ICEBERG"
    # the version's root holds exactly its messages (FORMAT.md: the root tells what changed)
    changes = blake.engine.changes(load.committed_version)
    assert len(changes) == 503
    for location in changes.values():  # content-hash names verify
        assert verify_named_content(location, blake.storage.read_immutable(location))
    assert not any("txn-" in f for f in _files(blake))  # the lease is gone
    blake.check()
    blake.create_table("ns", "after")  # the next commit merges the load into the tree
    blake.check()
    assert len(blake.list_tables("ns")) == 501


def test_an_empty_bulk_load_commits_nothing(blake) -> None:
    before = blake.latest_version()
    with blake.bulk_load() as load:
        pass
    assert load.committed_version is None and blake.latest_version() == before
    assert not any("txn-" in f for f in _files(blake))


def test_a_failure_mid_load_leaves_nothing_visible_and_no_files(blake, monkeypatch) -> None:
    before_version, before_files = blake.latest_version(), _files(blake)
    real = blake.storage.write_immutable_many
    calls = []

    def failing(files, *args, **kwargs):
        calls.append(len(files))
        if len(calls) == 3:
            raise StorageError("disk full (injected)")
        return real(files, *args, **kwargs)

    monkeypatch.setattr(blake.storage, "write_immutable_many", failing)
    with pytest.raises(StorageError, match="injected"), blake.bulk_load() as load:
        for i in range(5 * bulk_module.FILE_BATCH):
            load.create_table("ns", f"t{i:05d}")
    assert load.closed and load.committed_version is None
    assert blake.latest_version() == before_version
    assert blake.list_tables("ns") == []
    assert _files(blake) == before_files  # definitions written so far and the lease: gone


def test_a_failure_creating_the_root_leaves_nothing(blake, monkeypatch) -> None:
    before_version, before_files = blake.latest_version(), _files(blake)

    def refuse(*args, **kwargs):
        raise StorageError("root create failed (injected)")

    monkeypatch.setattr(bulk_module, "create_root", refuse)
    load = blake.bulk_load()
    for i in range(300):
        load.create_table("ns", f"t{i:04d}")
    with pytest.raises(StorageError, match="injected"):
        load.commit()
    assert blake.latest_version() == before_version and blake.list_tables("ns") == []
    assert _files(blake) == before_files


def test_a_name_taken_at_the_base_is_refused_at_once(blake) -> None:
    blake.create_table("ns", "taken")
    blake.create_view("ns", "view")
    with blake.bulk_load() as load:
        with pytest.raises(AlreadyExistsError, match=r"ns\.taken"):
            load.create_table("ns", "taken")
        with pytest.raises(AlreadyExistsError, match=r"ns\.view"):
            load.create_table("ns", "view")
        with pytest.raises(NamespaceNotFoundError):
            load.create_table("missing", "t")
        load.create_table("ns", "fine")
    assert sorted(blake.list_tables("ns")) == ["fine", "taken"]


@pytest.mark.parametrize("twice", ["table", "table-and-view"])
def test_a_name_created_twice_by_the_load_fails_the_commit(blake, twice) -> None:
    before_files = _files(blake)
    load = blake.bulk_load()
    for i in range(50):
        load.create_table("ns", f"t{i:03d}")
    if twice == "table":
        load.create_table("ns", "t007")
    else:
        load.create_view("ns", "t007")
    with pytest.raises(AlreadyExistsError, match=r"ns\.t007"):
        load.commit()
    assert blake.list_tables("ns") == [] and _files(blake) == before_files


def test_a_concurrent_writer_taking_a_name_is_a_conflict(blake) -> None:
    before_files = _files(blake)
    load = blake.bulk_load()
    for i in range(200):
        load.create_table("ns", f"t{i:04d}")
    blake.create_view("ns", "t0150")  # another writer, after the load began
    with pytest.raises(CommitConflictError, match=r"view 'ns\.t0150'") as err:
        load.commit()
    assert err.value.version == blake.latest_version()
    assert blake.list_tables("ns") == [] and blake.list_views("ns") == ["t0150"]
    new_definitions = {f for f in _files(blake) - before_files if "table-" in f or "view-" in f}
    assert len(new_definitions) == 1 and "view-ns-t0150" in new_definitions.pop()


def test_a_concurrent_drop_of_the_namespace_is_a_conflict(blake) -> None:
    blake.create_namespace("gone")
    load = blake.bulk_load()
    load.create_table("gone", "t")
    blake.drop_namespace("gone")
    with pytest.raises(CommitConflictError, match="namespace 'gone'"):
        load.commit()
    assert not blake.snapshot().namespace_exists("gone")


def test_a_concurrent_unrelated_commit_is_replayed_onto(blake) -> None:
    load = blake.bulk_load()
    for i in range(300):
        load.create_table("ns", f"t{i:04d}")
    other = blake.create_table("ns", "other")
    blake.set_namespace_properties("ns", {"k": "v"})
    version = load.commit()
    assert version == other + 2
    assert len(blake.list_tables("ns")) == 301
    assert blake.snapshot().namespace_properties("ns") == {"k": "v"}
    blake.check()


def test_a_delete_message_in_the_base_root_is_replaced_by_the_load(blake) -> None:
    blake.create_table("ns", "back")
    blake.drop_table("ns", "back")  # the latest root holds a delete message for it
    with blake.bulk_load() as load:
        load.create_table("ns", "back", {"table_format": "ICEBERG"})
        load.create_table("ns", "more")
    assert blake.describe_table("ns", "back").table_format == "ICEBERG"
    root = blake.engine.snapshot().root
    assert root.buffer[blake.snapshot().keys.table_key("ns", "back")][0] is not None
    blake.check()


def test_expiration_during_a_long_load_keeps_its_files(blake) -> None:
    load = blake.bulk_load(lease_millis=6 * 3600 * 1000)
    for i in range(3 * bulk_module.FILE_BATCH):  # files are written as the load goes
        load.create_table("ns", f"t{i:05d}")
    written = _definitions(blake)
    assert len(written) >= 2 * bulk_module.FILE_BATCH
    with expiring_later(minutes=180):  # every file looks 3 hours old, grace at its floor
        report = blake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert load.lease_id in report.live_transactions
    assert written <= _definitions(blake)  # none swept
    version = load.commit()
    assert len(blake.list_tables("ns")) == 3 * bulk_module.FILE_BATCH
    assert blake.latest_version() == version
    blake.check()


def test_expiration_still_sweeps_what_is_old_and_not_the_loads(blake, tmp_path) -> None:
    blake.create_table("ns", "a")
    blake.drop_table("ns", "a")  # its definition becomes garbage once versions expire
    hour_ago = blake.engine.snapshot().created_at_millis / 1000 - 3600
    for f in _files(blake):
        if "table-ns-a-" in f:  # written an hour before the load began
            os.utime(tmp_path / "lake" / f, (hour_ago, hour_ago))
    load = blake.bulk_load(lease_millis=6 * 3600 * 1000)
    for i in range(10):
        load.create_table("ns", f"t{i}")
    with expiring_later(minutes=180):
        report = blake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    # files older than the lease's start are still swept; the load's are not
    swept = {f.location for f in report.removed}
    assert any("table-ns-a-" in s for s in swept)
    assert not any("table-ns-t" in s for s in swept)
    load.commit()
    blake.check()


def test_a_crashed_load_is_reclaimed_once_its_lease_lapsed(blake) -> None:
    before = _definitions(blake)
    load = blake.bulk_load(lease_millis=60_000)
    for i in range(2 * bulk_module.FILE_BATCH):
        load.create_table("ns", f"t{i:05d}")
    staged = _definitions(blake) - before
    assert staged
    del load  # the process "crashed": no commit, no abort
    with expiring_later(minutes=1):  # lease still live: nothing of it swept
        blake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert staged <= _definitions(blake)
    with expiring_later(minutes=60):  # lapsed for longer than the grace period
        blake.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert not (staged & _definitions(blake))
    assert not any("txn-" in f for f in _files(blake))
    assert blake.list_tables("ns") == []


def test_the_lease_is_renewed_while_the_load_runs(blake, monkeypatch) -> None:
    clock = [bulk_module.now_millis()]
    monkeypatch.setattr(bulk_module, "now_millis", lambda: clock[0])
    load = blake.bulk_load(lease_millis=60_000)
    first = load._lease.expire_at_millis
    for step in range(5):
        clock[0] += 30_000  # past a third of the lease each time
        for i in range(bulk_module.FILE_BATCH):
            load.create_table("ns", f"t{step}-{i:05d}")
    assert load._lease.expire_at_millis >= first + 4 * 30_000
    stored = blake.engine.storage.read(transaction_location(load.lease_id))
    from trinityfs.lifecycle.dtxn import decode_transaction_def

    tdef = decode_transaction_def(stored, transaction_location(load.lease_id))
    assert tdef.expire_at_millis == load._lease.expire_at_millis
    load.commit()
    assert len(blake.list_tables("ns")) == 5 * bulk_module.FILE_BATCH


def test_a_lapsed_lease_refuses_to_commit(blake, monkeypatch) -> None:
    before_files = _files(blake)
    load = blake.bulk_load(lease_millis=60_000)
    for i in range(100):
        load.create_table("ns", f"t{i}")
    real = bulk_module.now_millis
    monkeypatch.setattr(bulk_module, "now_millis", lambda: real() + 120_000)
    with pytest.raises(TransactionExpiredError, match="lapsed"):
        load.commit()
    assert blake.list_tables("ns") == [] and _files(blake) == before_files


def test_a_lease_removed_elsewhere_refuses_to_commit(blake) -> None:
    load = blake.bulk_load()
    load.create_table("ns", "t")
    blake.load_distributed(load.lease_id).commit()  # someone commits the lease as a txn
    with pytest.raises(TransactionNotFoundError, match="lease"):
        load.commit()
    assert blake.list_tables("ns") == []


def test_bulk_load_onto_a_small_tree_with_history(small_lake) -> None:
    """Order-4 nodes: the base root's older messages are flushed through splits and
    merges before the load's messages are appended; every invariant holds."""
    lake = small_lake
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"o{i:03d}")
    for i in range(0, 40, 3):
        lake.drop_table("ns", f"o{i:03d}")
    with lake.bulk_load() as load:
        for i in range(200):
            load.create_table("ns", f"n{(i * 37) % 200:03d}")
        load.create_table("ns", "o003")  # dropped before: a delete message somewhere
    lake.check()
    names = set(lake.list_tables("ns"))
    assert len(names) == 200 + 40 - 14 + 1 and "o003" in names
    lake.create_table("ns", "z")
    lake.check()
    assert len(lake.list_tables("ns")) == 228


def _staging_peak(lake: Lakehouse, prefix: str, n: int) -> tuple[int, int]:
    """Peak traced Python memory while staging n creates, and while committing them."""
    load = lake.bulk_load()
    load._spill.run_size = 256
    tracemalloc.start()
    for i in range(n):
        load.create_table("ns", f"{prefix}{i:06d}", {"table_format": "ICEBERG"})
    staging = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    load.commit()
    committing = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return staging, committing


def test_staging_memory_does_not_grow_with_the_objects(blake, monkeypatch) -> None:
    monkeypatch.setattr(bulk_module, "FILE_BATCH", 128)
    monkeypatch.setattr(bulk_root_module, "COLUMN_CHUNK", 256)
    small_stage, small_commit = _staging_peak(blake, "a", 1500)
    large_stage, large_commit = _staging_peak(blake, "b", 6000)
    # staging keeps at most run_size pairs and FILE_BATCH files: flat
    assert large_stage < small_stage * 1.25 + 200_000, (small_stage, large_stage)
    # committing holds the root's columns (FORMAT.md keeps the messages in the root):
    # a few hundred bytes per object, no Python object per message
    per_object = (large_commit - small_commit) / 4500
    assert per_object < 700, per_object


def test_spill_holds_at_most_a_run_in_memory(tmp_path) -> None:
    from trinityfs.txn.spill import SortedSpill

    pairs = [(f"k{(i * 7919) % 5000:05d}", f"v{i}") for i in range(5000)]
    with SortedSpill(tmp_path, run_size=300) as spill:
        for key, value in pairs:
            spill.add(key, value)
            assert spill.in_memory < 300
        assert spill.runs == 5000 // 300
        assert list(spill.sorted_pairs()) == sorted(pairs)
        assert list(spill.sorted_pairs()) == sorted(pairs)  # read again
    assert not any(tmp_path.iterdir())  # closed: the runs are gone


def _ambiguous_create(lake: Lakehouse, monkeypatch, lands: bool) -> None:
    real = lake.engine.roots.create

    def create(version, data):
        if lands:
            real(version, data)
        monkeypatch.setattr(lake.engine.roots, "create", real)
        raise AmbiguousWriteError("reply lost (injected)")

    monkeypatch.setattr(lake.engine.roots, "create", create)


@pytest.mark.parametrize("lands", [True, False])
def test_an_unknown_outcome_is_settled_by_committing_again(blake, monkeypatch, lands) -> None:
    load = blake.bulk_load()
    for i in range(100):
        load.create_table("ns", f"t{i:03d}")
    _ambiguous_create(blake, monkeypatch, lands)
    with pytest.raises(AmbiguousWriteError):
        load.commit()
    assert not load.closed  # nothing deleted while the outcome is unknown
    version = load.commit()
    assert blake.latest_version() == version and len(blake.list_tables("ns")) == 100
    blake.check()


def test_abort_after_an_unknown_outcome_that_landed_deletes_nothing(blake, monkeypatch) -> None:
    load = blake.bulk_load()
    for i in range(100):
        load.create_table("ns", f"t{i:03d}")
    _ambiguous_create(blake, monkeypatch, lands=True)
    with pytest.raises(AmbiguousWriteError):
        load.commit()
    with pytest.raises(TransactionClosedError, match="committed as version"):
        load.abort()
    assert len(blake.list_tables("ns")) == 100
    blake.check()  # every definition file is still there


def test_bulk_load_under_whole_tree_verification_refuses_a_damaged_base(tmp_path) -> None:
    from trinityfs.errors import CorruptFileError

    path = tmp_path / "lake"
    Lakehouse.create(str(path)).create_namespace("ns")
    lake = Lakehouse.open(str(path), verify="tree")
    lake.create_table("ns", "old")
    with lake.bulk_load() as load:  # a sound base: verified, then loaded
        for i in range(50):
            load.create_table("ns", f"t{i:02d}")
    assert len(lake.list_tables("ns")) == 51
    damaged = next(f for f in _files(lake) if "table-ns-old-" in f)
    (path / damaged).write_bytes(b"\x00garbage")
    before = _files(lake)
    lake = Lakehouse.open(str(path), verify="tree")
    with pytest.raises(CorruptFileError, match="table-ns-old-"):
        lake.bulk_load()  # refused before it writes anything (not even its lease)
    assert _files(lake) == before


def test_bulk_load_under_whole_tree_verification_refuses_damage_committed_meanwhile(
    tmp_path,
) -> None:
    from trinityfs.errors import CorruptFileError

    path = tmp_path / "lake"
    Lakehouse.create(str(path)).create_namespace("ns")
    lake = Lakehouse.open(str(path), verify="tree")
    load = lake.bulk_load()  # its base is sound
    for i in range(2000):  # more than a batch: definitions are written as it goes
        load.create_table("ns", f"t{i:04d}")
    assert any("table-ns-t0000-" in f for f in _files(lake))
    other = Lakehouse.open(str(path))  # another writer commits a file that then rots
    other.create_table("ns", "theirs")
    damaged = next(f for f in _files(lake) if "table-ns-theirs-" in f)
    (path / damaged).write_bytes(b"\x00garbage")
    with pytest.raises(CorruptFileError, match="table-ns-theirs-"):
        load.commit()  # it would build on the latest version, whose tree reaches it
    assert lake.list_tables("ns") == ["theirs"]
    # refused before its root: what the load wrote (definitions, lease) is gone
    assert not any(re.search(r"table-ns-t\d{4}-|txn-", f) for f in _files(lake))


_ROOT_DECODE_PEAK = """
import sys
import pyarrow as pa
from trinityfs.format.node_decode import _read_table, decode_node
data = open(sys.argv[1], "rb").read()
pool = pa.default_memory_pool()
start = pool.max_memory()
decode_node(data, None, sys.argv[2])
peak = pool.max_memory() - start
raw = _read_table(data, sys.argv[2]).nbytes  # the columns as decoded: the least needed
print(raw, peak)
"""


def _bulk_root(lake: Lakehouse, n: int) -> tuple[bytes, str]:
    """A bulk load of n tables; (its root file's bytes, its name)."""
    from trinityfs.format.paths import root_node_file

    with lake.bulk_load() as load:
        for i in range(n):
            load.create_table("ns", f"t{(i * 7919) % n:05d}", {"table_format": "ICEBERG"})
    name = root_node_file(load.committed_version)
    return lake.storage.read_immutable(name), name


def test_the_commit_after_a_bulk_load_decodes_its_root_without_copying_it(blake, tmp_path) -> None:
    # The first commit after a bulk load decodes the load's root (1M messages at 1M
    # tables): its columns were copied once more (combine_chunks copies even a single
    # chunk), 2x the root's raw size in Arrow memory at the peak.
    import subprocess
    import sys

    data, name = _bulk_root(blake, 3000)
    path = tmp_path / name
    path.write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-c", _ROOT_DECODE_PEAK, path, name],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    raw, peak = map(int, out.stdout.split())
    assert raw > 500_000  # a root of ~300 bytes per message
    assert peak < raw * 1.3, (raw, peak)


def test_decoding_a_large_node_hands_arrow_memory_back(blake, monkeypatch) -> None:
    # Arrow's allocator keeps freed pages; the Python objects decoded from a large root
    # cannot reuse them, so they added the root's raw size to the next commit's peak.
    import pyarrow as pa

    import trinityfs.format.node_decode as node_decode

    released = []

    class Spy:
        def __init__(self, pool):
            self.pool = pool

        def release_unused(self) -> None:
            released.append(True)
            self.pool.release_unused()

    real = pa.default_memory_pool
    monkeypatch.setattr(pa, "default_memory_pool", lambda: Spy(real()))
    data, name = _bulk_root(blake, 300)
    monkeypatch.setattr(node_decode, "RELEASE_AFTER_BYTES", len(data))
    node_decode.decode_node(data, None, name)
    assert released == [True]
    monkeypatch.setattr(node_decode, "RELEASE_AFTER_BYTES", len(data) + 1)
    node_decode.decode_node(data, None, name)  # a smaller file: nothing to hand back
    assert released == [True]


def test_the_lease_is_renewed_while_staging_writes_no_file(blake, monkeypatch) -> None:
    """A caller staging slowly (a pipe into `trinityfs load`) writes no batch of files for
    a long time: staging renews the lease too, else the commit refused a live load."""
    clock = [bulk_module.now_millis()]
    monkeypatch.setattr(bulk_module, "now_millis", lambda: clock[0])
    load = blake.bulk_load(lease_millis=60_000)
    for i in range(5):  # 150 s in all, far fewer creates than a batch of files
        clock[0] += 30_000
        load.create_table("ns", f"t{i}")
    assert load.commit() == blake.latest_version()
    assert len(blake.list_tables("ns")) == 5


@pytest.mark.parametrize("after", ["create_root", "before_finish"])
def test_an_interrupt_after_the_root_landed_keeps_the_committed_version(
    blake, tmp_path, monkeypatch, after
) -> None:
    """A KeyboardInterrupt after the load's root was created (inside create_root, or
    before the load recorded it) went to commit()'s `except BaseException: abort()`,
    which deleted the definition files of a committed version. The load now settles
    first: it says the version was committed, and every file is kept."""
    real_create, real_finish = bulk_module.create_root, bulk_module.BulkLoad._finish

    def create_then_interrupt(*args, **kwargs):
        real_create(*args, **kwargs)
        raise KeyboardInterrupt

    def interrupt_before_finish(self, version):
        if version is not None and self._unsettled is not None:
            raise KeyboardInterrupt  # the root landed; the load has not recorded it yet
        real_finish(self, version)

    if after == "create_root":
        monkeypatch.setattr(bulk_module, "create_root", create_then_interrupt)
    else:
        monkeypatch.setattr(bulk_module.BulkLoad, "_finish", interrupt_before_finish)
    load = blake.bulk_load()
    for i in range(3):
        load.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
    version = blake.latest_version() + 1
    try:
        load.commit()
        outcome = "no error"
    except TransactionClosedError as exc:
        outcome = str(exc)
    except KeyboardInterrupt:  # caught here: pytest would stop the whole run
        outcome = "KeyboardInterrupt passed through, after abort()"
    assert f"committed as version {version}" in outcome
    monkeypatch.undo()
    lake = Lakehouse.open(str(tmp_path / "lake"))
    assert lake.latest_version() == version
    assert [lake.describe_table("ns", f"t{i}").table_format for i in range(3)] == ["ICEBERG"] * 3
    assert not any("txn-" in f for f in _files(lake))  # the lease is gone
    assert lake.fsck().ok
