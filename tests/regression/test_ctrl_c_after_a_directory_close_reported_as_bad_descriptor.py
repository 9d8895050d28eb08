"""Regression: Ctrl-C during `trinityfs load` printed "write of ... failed: OSError:
[Errno 9] Bad file descriptor" and exited 1 instead of "interrupted" and 130.

`LocalBackend._open_dir` walks down the directories one descriptor at a time:
`os.close(fd)` then `fd = nxt`. A KeyboardInterrupt raised as the close returned (Python
runs signal handlers between bytecodes) reached the clean-up handler with `fd` still
naming the closed descriptor: it closed it again, and that EBADF replaced the interrupt.
In a threaded process the second close could even close another thread's file.

The test raises KeyboardInterrupt right after each descriptor close of the main thread
in turn, for every local operation, and checks that the interrupt (never an OSError or
StorageError) reaches the caller and that no descriptor is left open.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import types
from collections.abc import Callable

import pytest

from trinityfs.storage import local, localdirs, localio
from trinityfs.storage.local import LocalBackend


class _InterruptAfterClose(types.ModuleType):
    """`os` for local.py whose n-th close in the main thread raises KeyboardInterrupt
    after the descriptor was closed, as a signal arriving at that instant would."""

    def __init__(self, after: int) -> None:
        super().__init__("os")
        self.after = after
        self.closes = 0

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def close(self, fd: int) -> None:
        os.close(fd)
        if threading.current_thread() is threading.main_thread():
            self.closes += 1
            if self.closes == self.after:
                raise KeyboardInterrupt


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _none_left_open(before: set[str]) -> bool:
    """Whether every descriptor opened since `before` was closed (the fsync threads
    close theirs when their flush finishes: give them a moment)."""
    deadline = time.monotonic() + 5
    while not _open_descriptors() <= before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _operations(backend: LocalBackend) -> dict[str, Callable[[int], object]]:
    def created(i: int) -> object:
        return backend.create_if_absent(f"a/b/c/root-{i}", b"root")

    def created_after(i: int) -> object:
        return backend.create_if_absent_after(f"a/b/c/after-{i}", b"root", lambda: None)

    def new_unsynced(i: int) -> object:
        backend.write_new_unsynced(f"d/e/f/def-{i}.binpb", b"definition")
        return backend.start_sync([f"d/e/f/def-{i}.binpb"])()

    return {
        "write": lambda i: backend.write(f"a/b/c/file-{i}", b"data"),
        "write_new_unsynced+sync": new_unsynced,
        "create_if_absent": created,
        "create_if_absent_after": created_after,
        "overwrite_advisory": lambda i: backend.overwrite_advisory("a/b/hint.txt", b"7"),
        "read": lambda i: backend.read("a/b/c/file-0"),
        "exists": lambda i: backend.exists("a/b/c/file-0"),
        "list": lambda i: [page for page in backend.list_pages("a/")],
        "delete": lambda i: backend.delete(f"a/b/c/file-{i}1"),
    }


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
@pytest.mark.parametrize("resolve", ["walk", "openat2"])
@pytest.mark.parametrize("fsync", [False, True], ids=["no-fsync", "fsync"])
@pytest.mark.parametrize(
    "operation",
    [
        "write",
        "write_new_unsynced+sync",
        "create_if_absent",
        "create_if_absent_after",
        "overwrite_advisory",
        "read",
        "exists",
        "list",
        "delete",
    ],
)
def test_interrupt_after_every_close_reaches_the_caller(
    tmp_path, monkeypatch, operation, fsync, resolve
):
    # "walk": every directory opened one component at a time (no openat2 on this system)
    if resolve == "walk":
        monkeypatch.setattr(localdirs._OPENAT2, "enabled", False)
    elif not localdirs._OPENAT2.enabled:
        pytest.skip("no openat2 here")
    backend = LocalBackend(str(tmp_path / "lake"), fsync=fsync)
    backend.write("a/b/c/file-0", b"data")  # for read, exists, list and delete
    run = _operations(backend)[operation]
    interrupted = 0
    for after in range(1, 50):
        for i in range(1, 3):  # the files the interrupted attempt may not have reached
            backend.write(f"a/b/c/file-{after}{i}", b"data")
        before = _open_descriptors()
        fake = _InterruptAfterClose(after)
        # no collection meanwhile: a backend of an earlier test collected now would close
        # its root's descriptor through the fake, taking an interrupt meant for `run`
        gc.collect()
        gc.disable()
        for module in (local, localdirs, localio):  # local.py and its parts
            monkeypatch.setattr(module, "os", fake)
        try:
            run(after)
        except KeyboardInterrupt:
            interrupted += 1
        finally:
            for module in (local, localdirs, localio):
                monkeypatch.setattr(module, "os", os)
            gc.enable()
        assert _none_left_open(before), f"close {after}: a descriptor was left open"
        if fake.closes < after:  # ran to the end without reaching close number `after`
            break
    else:
        pytest.fail("the operation never finished")
    # with openat2 a read closes no descriptor itself (its file object does)
    assert interrupted == after - 1 >= (1 if resolve == "walk" or operation != "read" else 0)
