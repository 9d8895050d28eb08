"""Cheap freshness (issue 13 item 2): a warm reader confirms the latest version with one
probe of the next root, reads the markers only when expiration may have moved them, and
the hint is written often enough for a cold reader to need O(1) probes."""

from __future__ import annotations

import math
import threading
import uuid

import pytest
from expire_clock import expiring_later

from trinityfs.catalog import Freshness, Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION, root_node_file
from trinityfs.storage import Storage
from trinityfs.txn.roots import HINT_INTERVAL


class Recorder:
    """Every storage request of one Storage as (operation, location)."""

    OPS = ("read", "exists", "write", "create_if_absent", "write_immutable_many", "list")
    ALIASES = {
        "overwrite_advisory": "write",  # the hint: a write request like any other
        "read_if_regular": "read",  # a marker: a read request like any other
    }

    def __init__(self, storage: Storage):
        self.calls: list[tuple[str, str]] = []
        for op in (*self.OPS, *self.ALIASES):
            real = getattr(storage, op)
            name = self.ALIASES.get(op, op)

            def recorded(*args, _op=name, _real=real, **kwargs):
                where = args[0] if args else ""
                self.calls.append((_op, where if isinstance(where, str) else "<batch>"))
                return _real(*args, **kwargs)

            setattr(storage, op, recorded)

    def take(self) -> list[tuple[str, str]]:
        out, self.calls = self.calls, []
        return out


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lake(tmp_path, name: str = "lake") -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / name), storage_options={"fsync": False})
    return _fill(lake)


def _object_store_lake() -> Lakehouse:
    """A lakehouse on an object store (memory://): the hint is amortised there."""
    return _fill(Lakehouse.create(f"memory://freshness-{uuid.uuid4().hex}"))


def _fill(lake: Lakehouse) -> Lakehouse:
    lake.create_namespace("ns")
    for i in range(3):
        lake.create_table("ns", f"t{i}")
    return lake


def _reader(lake: Lakehouse, clock: Clock | None = None) -> tuple[Lakehouse, Recorder]:
    options = {"fsync": False} if lake.url.startswith("file:") else None
    reader = Lakehouse.open(lake.url, storage_options=options)
    if clock is not None:
        reader.engine.roots._clock = clock
        reader.engine.roots._distrust_from(0)  # confirmations by the real clock: void
    reader.describe_table("ns", "t1")  # warm: root, nodes, definitions cached
    return reader, Recorder(reader.storage)


def test_warm_latest_probes_only_the_next_root(tmp_path):
    lake = _lake(tmp_path)
    reader, rec = _reader(lake)
    latest = reader.latest_version()
    rec.take()
    assert reader.latest_version() == latest
    assert rec.take() == [("exists", root_node_file(latest + 1))]
    reader.describe_table("ns", "t1")
    calls = rec.take()
    assert calls == [("exists", root_node_file(latest + 1))]  # definitions cached


def test_warm_fs_cat_costs_one_request_and_zero_within_the_staleness_bound(tmp_path):
    from trinityfs.fs.spec import TrinityFileSystem

    lake = _lake(tmp_path)
    fs = TrinityFileSystem(lake.url.removeprefix("file://"), skip_instance_cache=True)
    first = fs.cat("ns/t1")
    stats = fs.lake.storage.stats
    stats.reset()
    assert fs.cat("ns/t1") == first
    assert stats.snapshot()["requests"] == 1
    fs.lake.freshness = Freshness(max_staleness_seconds=3600)
    fs.lake.latest_version(fresh=True)
    stats.reset()
    for _ in range(3):
        assert fs.cat("ns/t1") == first
    assert stats.snapshot()["requests"] == 0


def test_a_warm_reader_follows_other_writers_without_reading_markers(tmp_path):
    lake = _lake(tmp_path)
    reader, rec = _reader(lake)
    base = reader.latest_version()
    for i in range(5):
        lake.create_table("ns", f"n{i}")
    rec.take()
    assert reader.latest_version() == base + 5
    calls = rec.take()
    assert {op for op, _ in calls} == {"exists"}, calls
    assert len(calls) <= 2 * math.ceil(math.log2(5)) + 2, calls
    assert reader.describe_table("ns", "n4")
    rec.take()
    reader.latest_version()
    assert rec.take() == [("exists", root_node_file(base + 6))]


def test_markers_are_read_again_once_the_trust_window_passed(tmp_path):
    clock = Clock()
    lake = _lake(tmp_path)
    reader, rec = _reader(lake, clock)
    roots = reader.engine.roots
    assert roots._window == 60.0  # half of the default grace floor (120 s)
    reader.latest_version()
    rec.take()
    clock.now += 59
    reader.latest_version()
    assert [op for op, _ in rec.take()] == ["exists"]
    clock.now += 61
    reader.latest_version()
    locations = [loc for _, loc in rec.take()]
    assert OLDEST_VERSION in locations and LATEST_HINT in locations


def test_own_commit_on_a_confirmed_base_reads_no_marker(tmp_path):
    lake = _lake(tmp_path)
    writer, rec = _reader(lake)
    writer.latest_version()
    rec.take()
    version = writer.create_table("ns", "fresh")
    calls = rec.take()
    assert not [c for c in calls if c[1] in (OLDEST_VERSION,)], calls
    assert ("create_if_absent", root_node_file(version)) in calls
    # the new root is confirmed: the next question costs one probe
    assert writer.latest_version() == version
    assert rec.take() == [("exists", root_node_file(version + 1))]


def test_commit_on_an_unconfirmed_base_still_checks_the_oldest_marker(tmp_path):
    clock = Clock()
    lake = _lake(tmp_path)
    writer, rec = _reader(lake, clock)
    writer.latest_version()
    clock.now += 3600  # expiration may have run meanwhile
    rec.take()
    writer.create_table("ns", "late")
    assert ("read", OLDEST_VERSION) in rec.take()


def test_local_disk_writes_the_hint_on_every_commit(tmp_path):
    lake = _lake(tmp_path)
    assert lake.engine.roots.hint_interval == 1
    for i in range(3):
        version = lake.create_table("ns", f"l{i}")
        assert int(lake.storage.read(LATEST_HINT)) == version


def test_hint_is_written_every_interval_and_lags_less_than_it():
    lake = _object_store_lake()
    writer, rec = _reader(lake)
    assert writer.engine.roots.hint_interval == HINT_INTERVAL
    writer.latest_version()
    hint_writes = []
    for i in range(3 * HINT_INTERVAL):
        rec.take()
        version = writer.create_table("ns", f"h{i}")
        if ("write", LATEST_HINT) in rec.take():
            hint_writes.append(version)
        hint = int(lake.storage.read(LATEST_HINT))
        assert 0 <= version - hint < HINT_INTERVAL
    assert hint_writes and all(v % HINT_INTERVAL == 0 for v in hint_writes), hint_writes
    assert len(hint_writes) == 3


def test_a_cold_reader_finds_latest_in_a_bounded_number_of_probes():
    lake = _object_store_lake()
    latest = lake.latest_version()
    while latest % HINT_INTERVAL != HINT_INTERVAL - 1:  # the most lag there can be
        latest = lake.create_table("ns", f"c{latest}")
    assert latest - int(lake.storage.read(LATEST_HINT)) == HINT_INTERVAL - 1
    cold = Lakehouse(Storage(lake.url))
    rec = Recorder(cold.storage)
    assert cold.latest_version() == latest
    calls = rec.take()
    reads = [c for c in calls if c[0] == "read"]
    probes = [c for c in calls if c[0] == "exists"]
    assert sorted(loc for _, loc in reads) == sorted([LATEST_HINT, OLDEST_VERSION])
    assert len(probes) <= 2 * math.log2(HINT_INTERVAL) + 2, probes


def test_a_missing_or_lagging_hint_is_rewritten_by_the_next_commit():
    lake = _object_store_lake()
    lake.storage.delete(LATEST_HINT)
    cold = Lakehouse.open(lake.url)
    version = cold.create_table("ns", "after")
    assert version % HINT_INTERVAL  # not a multiple: written because it was missing
    assert int(lake.storage.read(LATEST_HINT)) == version
    for i in range(HINT_INTERVAL + 1):
        lake.create_table("ns", f"lag{i}")
    lake.storage.write(LATEST_HINT, b"0")  # a writer crashed before its hint, say
    cold = Lakehouse.open(lake.url)
    version = cold.create_table("ns", "after2")
    assert int(lake.storage.read(LATEST_HINT)) == version


def test_a_root_this_process_saw_expire_makes_the_remembered_latest_untrusted(tmp_path):
    lake = _lake(tmp_path)
    roots = lake.engine.roots
    latest = lake.latest_version()
    assert roots.trusted_latest() == latest
    roots.forget(latest + 5)  # above what it knows: irrelevant
    assert roots.trusted_latest() == latest
    roots.forget(latest - 1)  # expiration (lifecycle/expire.py) deleted it
    assert roots.trusted_latest() is None
    rec = Recorder(lake.storage)
    assert lake.latest_version() == latest
    assert ("read", OLDEST_VERSION) in rec.take()
    assert roots.trusted_latest() == latest


def test_expiration_in_this_process_keeps_latest_right(tmp_path):
    lake = _lake(tmp_path)
    for i in range(4):
        lake.create_table("ns", f"e{i}")
    latest = lake.latest_version()
    with expiring_later():
        report = lake.expire(min_versions=1, max_age_millis=0, grace_millis=0)
    assert report.removed
    assert lake.latest_version() == latest and lake.oldest_version() == latest
    assert lake.create_table("ns", "after") == latest + 1


def test_expiration_racing_a_warm_reader_never_gives_a_wrong_latest(tmp_path):
    """Another process expires everything but the latest while this reader was idle
    past the trust window: the reader finds the true latest, and a pinned read of an
    expired version is a clean VersionNotFoundError."""
    clock = Clock()
    lake = _lake(tmp_path)
    reader, _ = _reader(lake, clock)
    old = reader.latest_version()
    reader.engine.roots.forget(old - 1)  # not cached: must come from storage
    for i in range(6):
        lake.create_table("ns", f"x{i}")
    with expiring_later():
        lake.expire(min_versions=1, max_age_millis=0, grace_millis=0)
    latest = lake.latest_version()
    assert not lake.storage.exists(root_node_file(old + 1))
    clock.now += 3600  # the roots expired were older than the grace: so much time passed
    assert reader.latest_version() == latest
    assert reader.describe_table("ns", "x5")
    with pytest.raises(VersionNotFoundError):
        reader.at(old - 1)


def test_threads_sharing_a_reader_see_versions_that_never_go_back(tmp_path):
    lake = _lake(tmp_path)
    reader, _ = _reader(lake)
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: list[list[int]] = [[] for _ in range(4)]

    def read(slot: int) -> None:
        try:
            while not stop.is_set():
                seen[slot].append(reader.latest_version())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for i in range(20):
        lake.create_table("ns", f"r{i}")
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    final = lake.latest_version()
    for versions in seen:
        assert versions == sorted(versions) and versions[-1] <= final
    assert reader.latest_version() == final
