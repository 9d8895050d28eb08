"""Regression (issue 11 item 7 / issue 10): a malformed `_latest_hint.txt` printed a
warning on every command. A reader tolerates it quietly (debug log), the next commit
rewrites it, fsck reports it."""

from __future__ import annotations

import logging

from trinityfs import Lakehouse
from trinityfs.format.paths import LATEST_HINT


def test_malformed_hint_is_quiet_rewritten_and_reported(tmp_path, caplog) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.storage.write(LATEST_HINT, b"\xffnot a number")
    with caplog.at_level(logging.INFO):
        fresh = Lakehouse.open(lake.url)
        assert fresh.list_namespaces() == ["ns"]
        assert fresh.latest_version() == 1
    assert not [r for r in caplog.records if r.levelno >= logging.INFO], caplog.records
    report = fresh.fsck()
    assert any(p.location == LATEST_HINT for p in report.warnings), report.to_dict()
    version = fresh.create_table("ns", "t")
    assert int(lake.storage.read(LATEST_HINT)) == version
