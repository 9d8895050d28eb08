"""The bounded memory of what each process was served (trinityfs/fuse/served.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from trinityfs.fuse.served import ServedMemory, process_of


def test_one_process_reading_many_files_evicts_only_its_own_oldest():
    memory = ServedMemory(max_processes=4, max_paths=3)
    memory.record("editor", ("ns", "t"), "loc-t", 1)
    for i in range(100):  # `grep -r` over the lakehouse
        memory.record("grep", ("ns", f"x{i}"), f"loc{i}", 2)
    assert memory.get("editor", ("ns", "t")).location == "loc-t"
    assert memory.get("grep", ("ns", "x0")) is None
    assert memory.get("grep", ("ns", "x99")).location == "loc99"
    assert len(memory) == 1 + 3


def test_processes_are_bounded_and_exited_ones_go_first():
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = process_of(int(child.stdout))  # exited: its pid is not that process any more
    me = process_of(os.getpid())
    memory = ServedMemory(max_processes=2, max_paths=8)
    memory.record(me, ("ns", "t"), "a", 1)
    memory.record(gone or (int(child.stdout), 1), ("ns", "t"), "b", 1)
    memory.record(("third", 0), ("ns", "t"), "c", 1)
    assert memory.get(me, ("ns", "t")).location == "a"
    assert memory.get(("third", 0), ("ns", "t")).location == "c"
    assert len(memory) == 2


def test_entries_expire_and_unknown_processes_are_not_recorded():
    memory = ServedMemory(max_age=0.0)
    memory.record(None, ("ns", "t"), "a", 1)
    assert len(memory) == 0
    memory.record(("p", 1), ("ns", "t"), "a", 1)
    assert memory.get(("p", 1), ("ns", "t")) is None


def test_a_thread_is_named_by_its_process():
    seen = []
    thread = threading.Thread(target=lambda: seen.append(process_of(threading.get_native_id())))
    thread.start()
    thread.join()
    assert seen == [process_of(os.getpid())] and seen[0][0] == os.getpid()
    assert process_of(0) is None
