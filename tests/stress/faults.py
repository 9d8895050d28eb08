"""Fault injection below `Storage`: a backend wrapper that fails, slows, truncates or kills.

`FaultyBackend` wraps the backend of any `Storage` (local directory, memory://, s3://)
and counts the operations that reach the store. At the k-th counted operation it fails
the way a store fails:

- ``error-before``: the store refuses; nothing happened (a 4xx, EIO before the write).
- ``error-after``: the write landed, then the reply was an error (a 5xx or a broken
  connection after the store acted, EIO from the fsync after the rename).
- ``timeout``: no reply in time and the write did not land; ``timeout-landed``: no reply
  in time but the write landed. A conditional create that times out raises
  AmbiguousWriteError, as the S3 backend does; any other operation raises TimeoutError.
- ``slow``: the reply comes late, but right.
- ``truncated-read``: a read returns a prefix of the file (a listing, a prefix of the
  entries) with no error, as a broken client that ignores Content-Length would.
- ``kill-before`` / ``kill-after`` / ``kill-torn``: SIGKILL this process before the
  operation, after it (before its caller sees the reply), or half-way through a write
  (a torn file: an in-place write cut short, or the temporary file of an atomic local
  write cut short).

With ``trace`` the wrapper records every counted operation as (index, op, location), so
a test can first run a workload clean, then sweep k over every operation it made.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from trinityfs.errors import AmbiguousWriteError
from trinityfs.storage import Storage
from trinityfs.storage.base import TEMP_PREFIX, Backend, FileEntry
from trinityfs.storage.local import LocalBackend

READ_OPS = frozenset({"read", "exists", "size", "list"})
WRITE_OPS = frozenset({"write", "write_new", "write_new_unsynced", "create_if_absent", "delete"})
ALL_OPS = READ_OPS | WRITE_OPS | {"sync"}

ERROR_BEFORE = "error-before"
ERROR_AFTER = "error-after"
TIMEOUT = "timeout"
TIMEOUT_LANDED = "timeout-landed"
SLOW = "slow"
TRUNCATED = "truncated-read"
KILL_BEFORE = "kill-before"
KILL_AFTER = "kill-after"
KILL_TORN = "kill-torn"

#: the ways a store fails (not kills), in the order the sweeps report them
FAULTS = (ERROR_BEFORE, ERROR_AFTER, TIMEOUT, TIMEOUT_LANDED, SLOW, TRUNCATED)
KILLS = (KILL_BEFORE, KILL_AFTER, KILL_TORN)


def applies(kind: str, op: str) -> bool:
    """Whether fault `kind` means something different from a clean run for `op`."""
    if kind == TRUNCATED:
        return op in ("read", "list")
    if kind == TIMEOUT_LANDED:
        return op in WRITE_OPS or op == "sync"
    if kind == KILL_TORN:
        return op in ("write", "write_new", "write_new_unsynced", "create_if_absent")
    return True


class InjectedError(OSError):
    """What the wrapper raises for an injected store error (an OSError, like a store's)."""

    def __init__(self, what: str):
        super().__init__(errno.EIO, f"injected fault: {what}")


@dataclass
class Plan:
    """Which counted operations to fault, and how.

    `kind` applies to the counted operations at..at+times-1 (1-based); `ops` limits what
    is counted (None: every operation). With `rate` > 0 every counted operation is also
    faulted with that probability, with a kind drawn from `random_kinds`.
    """

    kind: str | None = None
    at: int = 0
    times: int = 1
    ops: frozenset[str] | None = None
    delay: float = 0.02
    rate: float = 0.0
    random_kinds: tuple[str, ...] = FAULTS
    seed: int | None = None
    trace: bool = False


@dataclass
class Injected:
    """One fault that was injected: counted operation index, op, location, kind."""

    index: int
    op: str
    location: str
    kind: str


@dataclass
class FaultyBackend(Backend):
    """A backend that counts, traces and faults the operations of the backend it wraps."""

    inner: Backend
    plan: Plan = field(default_factory=Plan)
    count: int = 0
    trace: list[tuple[int, str, str]] = field(default_factory=list)
    injected: list[Injected] = field(default_factory=list)
    enabled: bool = True

    def __post_init__(self) -> None:
        self.needs_probe = self.inner.needs_probe
        self.write_parallelism = self.inner.write_parallelism
        self._lock = threading.Lock()
        self._rng = random.Random(self.plan.seed)

    # -- deciding ------------------------------------------------------------------------

    def _step(self, op: str, loc: str) -> str | None:
        plan = self.plan
        if not self.enabled or (plan.ops is not None and op not in plan.ops):
            return None
        with self._lock:
            self.count += 1
            n = self.count
            if plan.trace:
                self.trace.append((n, op, loc))
            kind = None
            if plan.kind is not None and plan.at <= n < plan.at + plan.times:
                kind = plan.kind
            elif plan.rate and self._rng.random() < plan.rate:
                kind = self._rng.choice(plan.random_kinds)
            if kind is not None and not applies(kind, op):
                kind = None
            if kind is not None:
                self.injected.append(Injected(n, op, loc, kind))
            return kind

    def _call(self, op: str, loc: str, run: Any, data: bytes | None = None) -> Any:
        """Run `run()` (the real operation) under the fault decided for it."""
        kind = self._step(op, loc)
        if kind is None:
            return run()
        if kind == KILL_BEFORE:
            _die()
        if kind == KILL_TORN:
            self._torn(op, loc, data)
            _die()
        if kind == ERROR_BEFORE:
            raise InjectedError(f"{op} {loc} refused")
        if kind == TIMEOUT:
            time.sleep(self.plan.delay)
            raise self._timeout(op, loc)
        if kind == SLOW:
            time.sleep(self.plan.delay)
            return run()
        error: Exception | None = None
        try:
            result = run()
        except Exception as exc:  # the store's own answer (a missing file): kept
            error = exc
        if kind == KILL_AFTER:
            _die()
        if kind == ERROR_AFTER:
            raise InjectedError(f"{op} {loc} failed after it was done")
        if kind == TIMEOUT_LANDED:
            time.sleep(self.plan.delay)
            raise self._timeout(op, loc)
        if error is not None:
            raise error
        if kind == TRUNCATED:
            return _truncate(result)
        return result

    def _timeout(self, op: str, loc: str) -> Exception:
        if op == "create_if_absent":
            return AmbiguousWriteError(f"injected timeout: conditional create of {loc!r}")
        return TimeoutError(f"injected timeout: {op} {loc}")

    def _torn(self, op: str, loc: str, data: bytes | None) -> None:
        """Leave what a write cut short leaves behind, then the caller dies."""
        part = (data or b"")[: len(data or b"") // 2]
        if op == "write_new_unsynced":
            self.inner.write_new_unsynced(loc, part)  # written in place: a torn file
        elif isinstance(self.inner, LocalBackend):
            # atomic local writes go through a temporary file: that is what is torn
            path = self.inner._path(loc)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = os.path.join(os.path.dirname(path), TEMP_PREFIX + uuid.uuid4().hex)
            with open(tmp, "wb") as f:
                f.write(part)
        # an S3 PUT is atomic: a torn PUT is one that never landed

    # -- the Backend interface -----------------------------------------------------------

    def read(self, loc: str) -> bytes:
        return self._call("read", loc, lambda: self.inner.read(loc))

    # extra arguments (durability flags, the files a sync covers) pass through unchanged
    def write(self, loc: str, data: bytes, *args: Any, **kwargs: Any) -> None:
        self._call("write", loc, lambda: self.inner.write(loc, data, *args, **kwargs), data)

    def write_new(self, loc: str, data: bytes) -> None:
        self._call("write_new", loc, lambda: self.inner.write_new(loc, data), data)

    def write_new_unsynced(self, loc: str, data: bytes) -> None:
        self._call(
            "write_new_unsynced", loc, lambda: self.inner.write_new_unsynced(loc, data), data
        )

    def sync(self, *args: Any, **kwargs: Any) -> None:
        self._call("sync", "", lambda: self.inner.sync(*args, **kwargs))

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        return self._call(
            "create_if_absent", loc, lambda: self.inner.create_if_absent(loc, data), data
        )

    def exists(self, loc: str) -> bool:
        return self._call("exists", loc, lambda: self.inner.exists(loc))

    def size(self, loc: str) -> int:
        return self._call("size", loc, lambda: self.inner.size(loc))

    def delete(self, loc: str) -> None:
        self._call("delete", loc, lambda: self.inner.delete(loc))

    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        yield from self._call("list", prefix, lambda: list(self.inner.list_pages(prefix)))


def _truncate(result: Any) -> Any:
    """The first half of a file's bytes, or of a listing's entries (as one page)."""
    if isinstance(result, bytes):
        return result[: len(result) // 2]
    entries = [e for page in result for e in page]
    return [entries[: len(entries) // 2]]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)  # not reached


def inject(storage: Storage, plan: Plan | None = None) -> FaultyBackend:
    """Wrap `storage`'s backend (once) and return the wrapper, now running `plan`."""
    if isinstance(storage.backend, FaultyBackend):
        wrapper = storage.backend
        wrapper.plan = plan or Plan()
        wrapper._rng = random.Random(wrapper.plan.seed)
        return wrapper
    wrapper = FaultyBackend(storage.backend, plan or Plan())
    storage.backend = wrapper
    return wrapper


@contextmanager
def every_storage_faulty(plan: Plan) -> Iterator[list[FaultyBackend]]:
    """Make every `Storage` the catalog opens (Lakehouse.create/open) run `plan`."""
    from trinityfs.catalog import lakehouse

    made: list[FaultyBackend] = []
    original = lakehouse.Storage

    def make(*args: Any, **kwargs: Any) -> Storage:
        storage = original(*args, **kwargs)
        made.append(inject(storage, plan))
        return storage

    lakehouse.Storage = make
    try:
        yield made
    finally:
        lakehouse.Storage = original
