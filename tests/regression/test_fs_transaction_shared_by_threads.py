"""Issue 11 item 3: one TrinityFileSystem used by two threads. While thread A was inside
`with fs.transaction:`, thread B's `fs.pipe` returned normally but joined A's transaction
(`_intrans` was per instance); A raised and B's acknowledged write was discarded. A
transaction belongs to the thread that opened it."""

from __future__ import annotations

import json
import threading

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}
TABLE = json.dumps({"kind": "table", "definition": {"table_format": "ICEBERG"}}).encode()


def test_other_threads_write_outside_the_transaction(tmp_path) -> None:
    root = str(tmp_path / "lake")
    Lakehouse.create(root, storage_options=NO_FSYNC).create_namespace("ns")
    fs = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    inside = threading.Event()
    b_done = threading.Event()
    b_errors: list[BaseException] = []

    def thread_b() -> None:
        inside.wait(10)
        try:
            assert not fs._intrans
            fs.pipe("/ns/from_b", TABLE)  # acknowledged: must be committed on its own
        except BaseException as exc:  # pragma: no cover - reported below
            b_errors.append(exc)
        finally:
            b_done.set()

    worker = threading.Thread(target=thread_b)
    worker.start()
    with pytest.raises(RuntimeError), fs.transaction:
        fs.pipe("/ns/from_a", TABLE)
        inside.set()
        assert b_done.wait(10)
        assert fs._intrans  # still this thread's transaction
        raise RuntimeError("A fails: its own writes are discarded")
    worker.join(10)
    assert not b_errors
    fresh = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    assert fresh.exists("/ns/from_b")
    assert not fresh.exists("/ns/from_a")


def test_open_for_writing_in_another_thread_is_not_deferred(tmp_path) -> None:
    root = str(tmp_path / "lake")
    Lakehouse.create(root, storage_options=NO_FSYNC).create_namespace("ns")
    fs = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    versions: list[int | None] = []

    def thread_b() -> None:
        with fs.open("/ns/b", "wb") as f:
            f.write(TABLE)
        versions.append(f.version)

    with fs.transaction:
        fs.pipe("/ns/a", TABLE)
        worker = threading.Thread(target=thread_b)
        worker.start()
        worker.join(10)
    assert versions and versions[0] is not None  # committed at B's close, not deferred
    assert fs.exists("/ns/a") and fs.exists("/ns/b")
