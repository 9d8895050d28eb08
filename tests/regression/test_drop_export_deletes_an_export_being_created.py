"""Regression: ``drop_export(x)`` run in one process while another process creates
export x deleted the files of the running export. The export had written its files but
not yet its record, so drop_export found no record and "cleaned up what a crashed
export left behind": the root copy (minimal, partial) or the whole ``_exports/x/``
directory (full). The creating process then committed its record over deleted files: a
recorded export that did not read, an fsck error, and every expiration stopped with
"referenced file(s) are missing ... run fsck" until the export was dropped.

Each test runs drop_export in a real second process at a chosen instant of the export
(deterministic hooks in the creating process; a file gate in the dropping one). Whatever
the interleaving, an export that create_export acknowledges must read, and fsck and
expiration must stay clean.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import TrinityError
from trinityfs.lifecycle import exports

# The dropping process. Options (JSON on argv): "gate" = wait for that file before the
# first delete of an export file (after drop_export decided what to delete) and create
# "<gate>.waiting" when there; "ahead_minutes" = the process's wall clock runs that far
# ahead (every file looks that much older to it: a creator paused that long; the store's
# clock is taken to agree, or expiration's skew check would read it as a clock ahead).
DROPPER = r"""
import json, os, sys, time
opts = json.loads(sys.argv[1])
if opts.get("ahead_minutes"):
    real_ns = time.time_ns
    shift = int(opts["ahead_minutes"] * 60e9)
    time.time_ns = lambda: real_ns() + shift
    real_s = time.time
    time.time = lambda: real_s() + shift / 1e9
from trinityfs import Lakehouse
from trinityfs.errors import TrinityError
from trinityfs.storage import Storage
if opts.get("ahead_minutes"):  # a pause, not a skew: the store's clock agrees with ours
    Storage.clock_ahead_millis = lambda self: 0
gate = opts.get("gate")
if gate:
    real_delete = Storage.delete
    def delete(self, loc, *a, **k):
        if "_export" in self.url + loc and not os.path.exists(gate):
            open(gate + ".waiting", "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.01)
        return real_delete(self, loc, *a, **k)
    Storage.delete = delete
lake = Lakehouse.open(opts["url"], storage_options={"fsync": False})
try:
    out = lake.drop_export(opts["name"]).to_dict()
except TrinityError as exc:
    out = {"error": type(exc).__name__, "message": str(exc)}
print(json.dumps(out))
"""


def _dropper(url: str, name: str, **opts) -> subprocess.Popen:
    args = json.dumps({"url": url, "name": name, **opts})
    return subprocess.Popen(
        [sys.executable, "-c", DROPPER, args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def _finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _lake(tmp_path) -> Lakehouse:
    """Small nodes: 40 tables make a tree of depth 2-3 (a full export copies nodes)."""
    lake = Lakehouse.create(
        str(tmp_path / "lake"),
        storage_options={"fsync": False},
        order=4,
        namespace_name_max_size_bytes=16,
        table_name_max_size_bytes=16,
        view_name_max_size_bytes=16,
        node_file_max_size_bytes=4 * (16 + 16 + 204) + 600,
    )
    lake.create_namespace("ns")
    for i in range(40):
        lake.create_table("ns", f"t{i}", {"properties": {"gen": str(i)}})
    return lake


def _assert_consistent(lake: Lakehouse, name: str, pinned: list[str]) -> None:
    """Every recorded export reads; fsck is clean; expiration does not stop."""
    fresh = Lakehouse.open(lake.url, storage_options={"fsync": False})
    if name in [e.name for e in fresh.exports()]:
        assert fresh.at(export=name).list_tables("ns") == pinned
    report = fresh.fsck()
    assert report.ok, report.errors[:3]
    with expiring_later():
        fresh.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    if name in [e.name for e in fresh.exports()]:
        assert fresh.at(export=name).list_tables("ns") == pinned


def _record_after(monkeypatch, before_record) -> None:
    """Run `before_record()` right before create_export commits its record."""
    real = exports._record

    def record(engine, name, location):
        before_record()
        return real(engine, name, location)

    monkeypatch.setattr(exports, "_record", record)


@pytest.mark.parametrize("ahead", [0, 10], ids=["prompt", "paused creator"])
@pytest.mark.parametrize("mode", ["minimal", "partial", "full"])
def test_drop_between_the_files_and_the_record_of_an_export(
    tmp_path, monkeypatch, mode, ahead
) -> None:
    """The drop runs to completion after the export wrote its files, before its record
    (with the dropper's clock `ahead` minutes ahead: a creator paused that long)."""
    lake = _lake(tmp_path)
    pinned = lake.at(30).list_tables("ns")
    drops: list[dict] = []

    def drop() -> None:
        drops.append(_finish(_dropper(lake.url, "x", ahead_minutes=ahead)))

    _record_after(monkeypatch, drop)
    try:
        lake.export("x", version=30, mode=mode)
    except TrinityError:
        # refusing is allowed only for a full export whose copy the drop deleted
        assert mode == "full" and ahead
    monkeypatch.undo()
    assert drops
    if not ahead:  # a prompt export's files are young: the drop must spare them
        assert drops[0]["spared"] and not drops[0]["removed"], drops[0]
    if mode != "full" or not ahead:
        assert [e.name for e in lake.exports()] == ["x"]  # acknowledged: it must read
        assert lake.at(export="x").list_tables("ns") == pinned
    _assert_consistent(lake, "x", pinned)


@pytest.mark.parametrize("mode", ["minimal", "partial"])
def test_drop_deciding_before_the_record_deletes_after_it(tmp_path, monkeypatch, mode) -> None:
    """The drop saw no record, then deleted the root copy only after create_export had
    committed its record and returned (the dropper's clock runs 10 minutes ahead: the
    root copy looks old, as after a creator paused that long)."""
    lake = _lake(tmp_path)
    pinned = lake.at(30).list_tables("ns")
    gate = str(tmp_path / "gate")
    procs: list[subprocess.Popen] = []

    def start_drop() -> None:
        procs.append(_dropper(lake.url, "x", gate=gate, ahead_minutes=10))
        deadline = time.monotonic() + 60
        while not os.path.exists(gate + ".waiting"):
            assert procs[0].poll() is None, procs[0].communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)

    _record_after(monkeypatch, start_drop)
    lake.export("x", version=30, mode=mode)
    monkeypatch.undo()
    open(gate, "w").close()
    _finish(procs[0])
    names = [e.name for e in Lakehouse.open(lake.url).exports()]
    assert names == ["x"]  # the drop decided before the record: it did not remove it
    assert Lakehouse.open(lake.url).at(export="x").list_tables("ns") == pinned
    _assert_consistent(lake, "x", pinned)


def test_drop_during_a_full_copy_by_a_process_that_thinks_it_is_old(tmp_path, monkeypatch):
    """A full export whose creator paused (modelled by a dropper whose clock runs 10
    minutes ahead, so every file looks old) has its directory deleted in the middle of
    the copy. The export must not be acknowledged over the missing files."""
    lake = _lake(tmp_path)
    pinned = lake.at(30).list_tables("ns")
    drops: list[dict] = []

    def progress(p) -> None:
        if p.phase == "definitions" and not drops:
            drops.append(_finish(_dropper(lake.url, "x", ahead_minutes=10)))

    with contextlib.suppress(TrinityError):  # refusing is fine, a broken export is not
        lake.export("x", version=30, mode="full", progress=progress)
    assert drops
    _assert_consistent(lake, "x", pinned)


def test_drop_during_a_full_copy(tmp_path) -> None:
    """The drop runs in the middle of a full copy (nodes copied, definitions not yet)."""
    lake = _lake(tmp_path)
    pinned = lake.at(30).list_tables("ns")
    drops: list[dict] = []

    def progress(p) -> None:
        if p.phase == "definitions" and not drops:
            drops.append(_finish(_dropper(lake.url, "x")))

    lake.export("x", version=30, mode="full", progress=progress)
    assert drops
    assert lake.at(export="x").list_tables("ns") == pinned
    _assert_consistent(lake, "x", pinned)
