"""Regression: a commit reported as failed (or as a conflict) although its root landed.

The conditional create of a root was settled by reading back only when the store said
AmbiguousWriteError. Three other ways to land a root and still tell the caller it
failed, found by the fault sweep (tests/stress/test_faults.py):

- the store acted, then reported an error (EIO from the directory fsync after the link,
  a 5xx or a broken connection after the PUT): StorageError from a commit, a rollback
  and Lakehouse.create, with the new version visible;
- an ambiguous attempt that landed late, followed by a retry that found the root
  "already there": taken for a lost race, the commit then conflicted with itself;
- reading ``_oldest_version.txt`` right after the create failed: StorageError, with the
  version visible.

A caller told "failed" may retry and apply its change twice. Now every failed create is
settled by reading the root back (an error stands only when the root is not there), and
a commit whose root landed but could not be confirmed raises AmbiguousWriteError.
"""

from __future__ import annotations

import errno
import time
from typing import Any

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, StorageError
from trinityfs.storage import Storage
from trinityfs.storage.base import Backend


class Flaky(Backend):
    """Wraps a backend; `script` maps an operation to what to do on its next call."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.needs_probe = inner.needs_probe
        self.write_parallelism = inner.write_parallelism
        self.script: dict[str, list[str]] = {}

    def _next(self, op: str) -> str | None:
        queue = self.script.get(op)
        return queue.pop(0) if queue else None

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        action = self._next("create")
        if action == "error-after":
            self.inner.create_if_absent(loc, data)
            raise OSError(errno.EIO, "injected: failed after the write landed")
        if action == "error-before":
            raise OSError(errno.EIO, "injected: refused")
        if action == "ambiguous-lost":
            raise AmbiguousWriteError("injected: timed out, did not land (yet)")
        if action == "late-landing":
            # the earlier ambiguous attempt lands now; this retry finds it there
            self.inner.create_if_absent(loc, data)
            return False
        return self.inner.create_if_absent(loc, data)

    def read(self, loc: str) -> bytes:
        if loc == "_oldest_version.txt" and self._next("read-oldest") == "error":
            raise OSError(errno.EIO, "injected: read failed")
        return self.inner.read(loc)

    def write(self, loc: str, data: bytes, *args: Any, **kwargs: Any) -> None:
        self.inner.write(loc, data, *args, **kwargs)

    def write_new(self, loc: str, data: bytes) -> None:
        self.inner.write_new(loc, data)

    def write_new_unsynced(self, loc: str, data: bytes) -> None:
        self.inner.write_new_unsynced(loc, data)

    def sync(self, *args: Any, **kwargs: Any) -> None:
        self.inner.sync(*args, **kwargs)

    def exists(self, loc: str) -> bool:
        return self.inner.exists(loc)

    def size(self, loc: str) -> int:
        return self.inner.size(loc)

    def delete(self, loc: str) -> None:
        self.inner.delete(loc)

    def list_pages(self, prefix: str):
        return self.inner.list_pages(prefix)


def flaky_lake(url: str) -> tuple[Lakehouse, Flaky]:
    storage = Storage(url)
    storage.backend = flaky = Flaky(storage.backend)
    return Lakehouse(storage), flaky


@pytest.fixture
def url(tmp_path) -> str:
    url = str(tmp_path / "lake")
    Lakehouse.create(url).create_namespace("ns")
    return url


def test_error_after_the_root_landed_is_a_success(url: str) -> None:
    lake, flaky = flaky_lake(url)
    flaky.script["create"] = ["error-after"]
    assert lake.create_table("ns", "t") == 2
    assert Lakehouse.open(url).list_tables("ns") == ["t"]


def test_error_before_the_write_still_fails_and_leaves_nothing(url: str) -> None:
    lake, flaky = flaky_lake(url)
    flaky.script["create"] = ["error-before"]
    with pytest.raises(StorageError) as info:
        lake.create_table("ns", "t")
    assert not isinstance(info.value, AmbiguousWriteError)
    assert isinstance(info.value.__cause__, OSError)  # the store's own error, chained
    assert Lakehouse.open(url).latest_version() == 1
    assert Lakehouse.open(url).list_tables("ns") == []


def test_late_landing_of_an_ambiguous_attempt_is_not_a_lost_race(url: str) -> None:
    lake, flaky = flaky_lake(url)
    flaky.script["create"] = ["ambiguous-lost", "late-landing"]
    assert lake.create_table("ns", "t") == 2  # was: CommitConflictError with itself
    assert Lakehouse.open(url).list_tables("ns") == ["t"]


def test_failed_oldest_marker_read_after_landing_is_ambiguous(url: str) -> None:
    lake, flaky = flaky_lake(url)
    txn = lake.transaction()
    txn.create_table("ns", "t")
    # an hour later: the base is no longer confirmed (txn/roots.py trust window), so the
    # commit must read the oldest marker after its root landed
    lake.engine.roots._clock = lambda: time.monotonic() + 3600
    flaky.script["read-oldest"] = ["error"]
    with pytest.raises(AmbiguousWriteError):
        txn.commit()
    assert Lakehouse.open(url).list_tables("ns") == ["t"]


def test_rollback_error_after_landing_is_a_success(url: str) -> None:
    lake, flaky = flaky_lake(url)
    lake.create_table("ns", "t")
    flaky.script["create"] = ["error-after"]
    assert lake.rollback(1) == 3
    assert Lakehouse.open(url).list_tables("ns") == []


def test_create_lakehouse_error_after_landing_is_a_success(tmp_path, monkeypatch) -> None:
    from trinityfs.catalog import lakehouse as lakehouse_module

    original = lakehouse_module.Storage
    made: list[Flaky] = []

    def flaky_storage(*args: Any, **kwargs: Any) -> Storage:
        storage = original(*args, **kwargs)
        storage.backend = Flaky(storage.backend)
        storage.backend.script["create"] = ["error-after"]
        made.append(storage.backend)
        return storage

    monkeypatch.setattr(lakehouse_module, "Storage", flaky_storage)
    url = str(tmp_path / "new")
    lake = Lakehouse.create(url)
    assert made and lake.latest_version() == 0
    monkeypatch.undo()
    Lakehouse.open(url).check(0)
