"""Expiration while other processes commit: nothing committed is lost, every kept
version still reads in full."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from lifecycle_helpers import FAST_TREE, NO_FSYNC, commit_tables, make_history, read_fully

from trinityfs import Lakehouse

WRITERS = 2
WRITE_SECONDS = 7.0
TTL_MILLIS = 2000  # the grace period: transactions here take milliseconds


@pytest.mark.stress
def test_expire_while_other_processes_commit(tmp_path) -> None:
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options=NO_FSYNC, txn_ttl_millis=TTL_MILLIS, **FAST_TREE)
    make_history(lake, 30, tables=20)
    lake.export("pin", version=10)
    lake.export("pin-partial", version=20, mode="partial", depth=1)
    pinned = {e: read_fully(lake, export=e) for e in ("pin", "pin-partial")}

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    writers = [
        ctx.Process(target=commit_tables, args=(url, f"w{i}_", WRITE_SECONDS, results))
        for i in range(WRITERS)
    ]
    for w in writers:
        w.start()
    runs = []
    deadline = time.monotonic() + WRITE_SECONDS + 60
    try:
        while any(w.is_alive() for w in writers) and time.monotonic() < deadline:
            report = lake.expire(max_age_millis=0, min_versions=2)
            runs.append(report)
            latest = lake.latest_version()
            read_fully(lake, latest)  # a reader at the same time
            time.sleep(0.05)
        committed = dict(results.get(timeout=60) for _ in writers)
    finally:
        for w in writers:
            w.join(timeout=60)
            if w.is_alive():
                w.kill()
    assert all(w.exitcode == 0 for w in writers)
    errors = [item for done in committed.values() for item in done if item[0] == "error"]
    assert not errors, errors
    made = {
        name: version
        for done in committed.values()
        for name, version in done
        if name not in ("expired", "error")
    }
    refused = [t for done in committed.values() for kind, t in done if kind == "expired"]
    assert len(refused) <= len(made) // 4, "only the odd commit may outlive the TTL"
    assert len(made) >= 20, "the writers must have committed while expiration ran"
    assert sum(r.files_removed for r in runs) > 0, "expiration must have removed something"
    assert sum(r.roots_removed for r in runs) > 0

    # once writers stopped and their files aged past the grace period: collect again
    time.sleep((TTL_MILLIS + TTL_MILLIS // 4) / 1000 + 0.2)
    final = lake.expire(max_age_millis=0, min_versions=2)
    assert not final.spared_young

    latest = lake.latest_version()
    oldest = lake.oldest_version()
    content = read_fully(lake, latest)
    for name, version in made.items():  # no committed change is lost
        assert f"ns.{name}" in content
        if version >= oldest:
            assert name in lake.at(version).list_tables("ns")
    for version in range(oldest, latest + 1):  # every kept version, in full
        read_fully(lake, version)
    for name, before in pinned.items():
        assert read_fully(lake, export=name) == before
    report = lake.fsck()
    assert report.ok, report.errors
    assert not report.orphans, report.orphans[:5]
