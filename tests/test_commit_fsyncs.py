"""What a local commit flushes and in which order (issue 13 item 1).

A one-table commit flushes (1) the definition file, (2) its directory, (3) the root's
temporary file, (4) the root directory after linking the root. (1) and (2) now run on
background threads while the root is built, and are waited for before the root is
linked: the root never references a file that could vanish in a crash.
"""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest

import trinityfs.txn.transaction as transaction_module
from trinityfs import Lakehouse
from trinityfs.errors import StorageError


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


def test_definition_flushes_run_while_the_root_is_built(lake, monkeypatch):
    building = threading.Event()
    real_build = transaction_module.build_root

    def build_root(*args, **kwargs):
        building.set()
        return real_build(*args, **kwargs)

    monkeypatch.setattr(transaction_module, "build_root", build_root)
    overlapped = []
    real_fsync = os.fsync

    def fsync(fd):
        if "table-ns-t-" in _path_of(fd):
            # a flush that waits for the root building can only finish if it runs beside it
            overlapped.append(building.wait(timeout=3))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    lake.create_table("ns", "t")
    assert overlapped == [True]


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
