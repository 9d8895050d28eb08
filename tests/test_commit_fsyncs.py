"""What a local commit flushes and in which order (issue 13 item 1).

A one-table commit flushes (1) the definition file, (2) its directory, (3) the root's
temporary file, (4) the root directory after linking the root. The definition's
write-out starts as soon as it is written (while the root is built); (1), (2) and (3)
then run together (on pool threads, the last of (1)/(2) in the committing thread), so
the filesystem commits them in one journal transaction, and all end before the root
is linked: the root never references a file that could vanish in a crash.
"""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest

import trinityfs.storage.local as local_module
import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import StorageError
from trinityfs.storage import Storage
from trinityfs.storage.base import TEMP_PREFIX


def _path_of(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


class FsyncLog:
    """Every fsync (path, thread, start, end) and every hard link (the root's create)."""

    def __init__(self, monkeypatch, slow: str = "", fail: str = "") -> None:
        self.events: list[tuple] = []
        self.lock = threading.Lock()
        real_fsync, real_link = os.fsync, os.link

        def fsync(fd):
            path = _path_of(fd)
            start = time.monotonic()
            if slow and slow in path:
                time.sleep(0.2)
            if fail and fail in path:
                raise OSError(errno.EIO, "injected", path)
            real_fsync(fd)
            with self.lock:
                self.events.append(("fsync", path, threading.current_thread().name, start))
                self.events.append(("fsynced", path, None, time.monotonic()))

        def link(src, dst, *args, **kwargs):
            with self.lock:
                self.events.append(("link", str(dst), None, time.monotonic()))
            return real_link(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "link", link)

    def clear(self) -> None:
        with self.lock:
            self.events.clear()


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "warm")
    return lake


def _definition_flushes(events) -> list[tuple]:
    return [e for e in events if e[0] == "fsynced" and "table-ns-t-" in e[1]]


def test_definition_flushes_end_before_the_root_is_linked(lake, monkeypatch):
    log = FsyncLog(monkeypatch, slow="table-ns-t-")  # a slow disk for the definition
    version = lake.create_table("ns", "t")
    root_links = [e for e in log.events if e[0] == "link" and e[1].startswith("_")]
    assert len(root_links) == 1
    flushed = _definition_flushes(log.events)
    assert flushed, log.events
    assert all(end < root_links[0][3] for _, _, _, end in flushed)
    assert lake.latest_version() == version


def test_definition_write_out_starts_before_the_root_is_built(lake, monkeypatch):
    started: list[tuple[str, bool]] = []
    building = threading.Event()
    real_build = transaction_module.build_root

    def build_root(*args, **kwargs):
        building.set()
        return real_build(*args, **kwargs)

    real_writeback = local_module._start_writeback

    def writeback(fd):
        started.append((_path_of(fd), building.is_set()))
        real_writeback(fd)

    monkeypatch.setattr(transaction_module, "build_root", build_root)
    monkeypatch.setattr(local_module, "_start_writeback", writeback)
    lake.create_table("ns", "t")
    definition = [built for path, built in started if "table-ns-t-" in path]
    assert definition == [False]  # started before the root was built
    root_temp = [built for path, built in started if TEMP_PREFIX in path]
    assert root_temp == [True]


def test_the_root_content_is_flushed_beside_the_definition(lake, monkeypatch):
    """(1) and (3) run at the same time: each waits until the other has started, which
    only finishes when they overlap (one journal commit for both on ext4)."""
    definition_started, root_started = threading.Event(), threading.Event()
    met: list[tuple[str, bool]] = []
    real_fsync = os.fsync

    def fsync(fd):
        path = _path_of(fd)
        if "table-ns-t-" in path:
            definition_started.set()
            met.append(("definition", root_started.wait(timeout=3)))
        elif TEMP_PREFIX in path:
            root_started.set()
            met.append(("root", definition_started.wait(timeout=3)))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    lake.create_table("ns", "t")
    assert sorted(met) == [("definition", True), ("root", True)]


def test_every_flush_of_a_commit_is_still_made(lake, monkeypatch):
    log = FsyncLog(monkeypatch)
    lake.create_table("ns", "t")
    paths = [e[1] for e in log.events if e[0] == "fsync"]
    root = os.path.realpath(lake.storage.backend.root)
    definition = next(p for p in paths if "table-ns-t-" in p)
    assert os.path.dirname(definition) in paths  # (2) its directory entry
    assert any(os.path.basename(p).startswith(".trinityfs-tmp-") for p in paths)  # (3)
    assert root in paths  # (4) the root's directory entry


def test_a_failed_definition_flush_commits_nothing(lake, monkeypatch):
    before = lake.latest_version()
    FsyncLog(monkeypatch, fail="table-ns-t-")
    with pytest.raises(StorageError, match="table-ns-t-"):
        lake.create_table("ns", "t")
    monkeypatch.undo()
    assert lake.latest_version() == before
    assert "t" not in lake.list_tables("ns")


def test_without_fsync_nothing_runs_in_the_background(tmp_path, monkeypatch):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    log = FsyncLog(monkeypatch)
    lake.create_table("ns", "t")
    assert [e for e in log.events if e[0] == "fsync"] == []


def test_a_failed_root_flush_commits_nothing_and_leaves_no_temporary_file(lake, monkeypatch):
    before = lake.latest_version()
    FsyncLog(monkeypatch, fail=TEMP_PREFIX)
    with pytest.raises(StorageError):
        lake.create_table("ns", "t")
    monkeypatch.undo()
    assert lake.latest_version() == before
    assert not [n for n in os.listdir(lake.storage.backend.root) if n.startswith(TEMP_PREFIX)]
    lake.create_table("ns", "t")  # the next commit writes and flushes everything again
    assert "t" in lake.list_tables("ns")


def test_a_failed_definition_flush_keeps_failing_a_retried_create(lake, monkeypatch):
    """A create is retried when its outcome looked unknown (storage/settle.py): the wait
    for the definitions must then fail again, never let the retry link the root."""
    FsyncLog(monkeypatch, fail="table-ns-t-")
    txn = lake.transaction()
    txn.create_table("ns", "t")
    with pytest.raises(StorageError, match="table-ns-t-"):
        txn.commit()
    with pytest.raises(StorageError, match="table-ns-t-"):
        txn.txn._wait_files_durable()


def test_create_after_a_failed_first_flush_leaves_nothing(tmp_path):
    storage = Storage(str(tmp_path / "s"))

    def failing() -> None:
        raise StorageError("injected: the referenced files are not durable")

    with pytest.raises(StorageError, match="injected"):
        storage.create_if_absent("_1.arrow", b"root", first_durable=failing)
    assert not storage.exists("_1.arrow")
    assert os.listdir(tmp_path / "s") == []  # no temporary file either
    calls: list[int] = []
    assert storage.create_if_absent("_1.arrow", b"root", first_durable=lambda: calls.append(1))
    assert calls == [1]
    assert storage.read("_1.arrow") == b"root"
    assert not storage.create_if_absent("_1.arrow", b"other", first_durable=lambda: None)


def test_other_stores_flush_first_then_create(monkeypatch):
    storage = Storage("memory://create-after")
    order: list[str] = []
    real = storage.backend.create_if_absent

    def create(loc: str, data: bytes) -> bool:
        order.append("create")
        return real(loc, data)

    monkeypatch.setattr(storage.backend, "create_if_absent", create)
    assert storage.create_if_absent("_1.arrow", b"x", first_durable=lambda: order.append("flush"))
    assert order == ["flush", "create"]


def test_the_last_flush_of_the_definitions_runs_in_the_committing_thread(lake, monkeypatch):
    """(1)/(2) are handed to the pool but one, which the committing thread runs itself
    instead of only waiting (one thread hand-off fewer per commit); (3) still runs on
    the pool beside them."""
    threads: dict[str, list[str]] = {}
    real_fsync = os.fsync

    def fsync(fd):
        threads.setdefault(_path_of(fd), []).append(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    lake.create_table("ns", "t")
    me = threading.current_thread().name
    definition = next(p for p in threads if "table-ns-t-" in p)
    assert threads[definition] == [me]
    root_temp = next(p for p in threads if TEMP_PREFIX in p)
    assert threads[root_temp] != [me]
    pooled = [p for p, names in threads.items() if names != [me]]
    assert root_temp in pooled and os.path.dirname(definition) in pooled


def test_a_sync_of_nothing_flushes_nothing(tmp_path, monkeypatch):
    """`start_sync([])` with no new directory: no flush, no error (the committing
    thread's own flush is taken only when there is one)."""
    calls = []
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd))
    backend = local_module.LocalBackend(str(tmp_path), fsync=True)
    wait = backend.start_sync([])
    wait()
    wait()
    assert calls == []
