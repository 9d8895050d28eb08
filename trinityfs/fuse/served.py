"""What each process was last shown of a table or view: the base of its later write.

A write through the mount must not overwrite a change its writer never saw. An editor
reads a file, is held for minutes while the table is changed through the API, then
saves: POSIX has no call that says "this write is based on that read", so the mount
remembers, per process and path, which definition it served (its location, which
changes with every committed change of the object). A later write by the same process
(in place, or a temporary file renamed over the path: `sed -i`, vim, `os.replace`) is
refused with EBUSY when the object changed since, and recorded as served when it
commits. A process the mount has no record of writes on what the mount shows now.

Memory is bounded: at most `MAX_PROCESSES` processes of `MAX_PATHS` paths each (a
`grep -r` over the lakehouse evicts only its own oldest paths), entries older than
`MAX_AGE` seconds are ignored, and when the table of processes is full the entries of
processes that have exited go first, then the least recently used.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass

from trinityfs.lru import LRU

MAX_PROCESSES = 256
MAX_PATHS = 64
MAX_AGE = 12 * 3600.0
PROCESS_SECONDS = 1.0  # how long a pid is taken to name the same process (process_of)

Process = tuple[int, int]  # (process id, start time in clock ticks since boot)
Key = tuple[str, str]  # (namespace, name)

_RECENT: LRU[int, tuple[Process, float]] = LRU(1024)  # pid -> (process, when read)


def process_of(pid: int) -> Process | None:
    """The process (thread group) of the thread `pid` that made a FUSE request, with its
    start time so a reused pid is another process; None when unknown (pid 0: the kernel,
    or a request with no caller). Remembered for `PROCESS_SECONDS` per pid: a tool that
    opens many files (`cat *`, `grep -r`, rsync) reads /proc once, not twice per file."""
    if pid <= 0:
        return None
    now = time.monotonic()
    hit = _RECENT.get(pid)
    if hit is not None and now - hit[1] < PROCESS_SECONDS:
        return hit[0]
    process = _read_process(pid)
    _RECENT.put(pid, (process, now))
    return process


def _read_process(pid: int) -> Process:
    tgid = pid
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Tgid:"):
                    tgid = int(line.split()[1])
                    break
        with open(f"/proc/{tgid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (tgid, int(fields[19]))  # field 22 of proc(5): starttime
    except (OSError, ValueError, IndexError):
        return (tgid, 0)  # no /proc (or the process just exited): the pid alone


def _alive(process: Process) -> bool:
    tgid, start = process
    if start == 0:
        return os.path.exists(f"/proc/{tgid}")
    return _read_process(tgid) == process


@dataclass(frozen=True)
class Served:
    """One definition served to a process: where it was stored, at which version."""

    location: str
    version: int
    at: float  # time.monotonic() when served


class ServedMemory:
    """Per process, per path: the definition last served (see the module docstring)."""

    def __init__(
        self,
        max_processes: int = MAX_PROCESSES,
        max_paths: int = MAX_PATHS,
        max_age: float = MAX_AGE,
    ):
        self.max_processes = max_processes
        self.max_paths = max_paths
        self.max_age = max_age
        self._lock = threading.Lock()  # makes room and adds a process as one step
        self._by_process: LRU[Hashable, LRU[Key, Served]] = LRU(max_processes)

    def __len__(self) -> int:
        processes = self._by_process.keys()  # a copy: get() reorders
        return sum(len(self._by_process.get(p) or ()) for p in processes)

    def record(self, process: Hashable | None, key: Key, location: str, version: int) -> None:
        """`process` was served the definition stored at `location` for `key`."""
        if process is None:
            return
        with self._lock:
            paths = self._by_process.get(process)
            if paths is None:
                if len(self._by_process) >= self.max_processes:
                    self._by_process.discard_if(lambda p: isinstance(p, tuple) and not _alive(p))
                paths = LRU(self.max_paths)
                self._by_process.put(process, paths)  # the least recently used goes
        paths.put(key, Served(location, version, time.monotonic()))

    def forget(self, process: Hashable | None, key: Key) -> None:
        """`process` removed or moved `key` itself: what it read there is no base."""
        paths = None if process is None else self._by_process.get(process)
        if paths is not None:
            paths.pop(key)

    def get(self, process: Hashable | None, key: Key) -> Served | None:
        """What `process` was last served of `key`, unless too old or never."""
        if process is None:
            return None
        paths = self._by_process.get(process)
        entry = None if paths is None else paths.get(key)
        if entry is None or time.monotonic() - entry.at > self.max_age:
            return None
        return entry


__all__ = ["MAX_AGE", "MAX_PATHS", "MAX_PROCESSES", "Served", "ServedMemory", "process_of"]
