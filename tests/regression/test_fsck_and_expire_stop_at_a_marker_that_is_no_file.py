"""fsck and expire read both marker files with a plain read: a symlinked
`_latest_hint.txt` made them fail with SymlinkInRootError, and a FIFO there made them
wait forever, although the hint is advisory (readers and commits have ignored such a hint
since 4da340d, helper rate4's report). Now fsck reports it as a warning and expiration
carries on; an oldest marker like that is refused by name, as readers refuse it (fsck
reports it and checks the rest), and its target is never written."""

from __future__ import annotations

import os

import pytest
from waits import within

from trinityfs import Lakehouse
from trinityfs.errors import SymlinkInRootError
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION

WAIT = 20.0  # seconds a call may take before the test says it hangs


def _lake(tmp_path) -> tuple[Lakehouse, str]:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    return lake, str(tmp_path / "lake")


def test_a_symlinked_hint_is_a_warning_for_fsck_and_no_obstacle_to_expire(tmp_path) -> None:
    lake, root = _lake(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("1")
    os.remove(os.path.join(root, LATEST_HINT))
    os.symlink(outside, os.path.join(root, LATEST_HINT))
    report = lake.fsck()
    assert report.ok, report.errors
    assert [w.location for w in report.warnings if w.kind == "marker"] == [LATEST_HINT]
    expired = lake.expire()
    assert any(LATEST_HINT in p for p in expired.marker_problems)
    assert outside.read_text() == "1"


def test_a_fifo_at_the_hint_does_not_make_fsck_or_expire_wait(tmp_path) -> None:
    lake, root = _lake(tmp_path)
    os.remove(os.path.join(root, LATEST_HINT))
    os.mkfifo(os.path.join(root, LATEST_HINT))
    assert within(WAIT, lake.fsck).ok
    within(WAIT, lake.expire)


def test_a_symlinked_oldest_marker_is_refused_by_name_and_its_target_kept(tmp_path) -> None:
    """The oldest marker bounds what may be read: expire and readers refuse it, naming
    it and the repair, and never write through it; fsck reports it as an error with the
    repair and checks the rest (test_cli_fsck_gives_no_report_for_a_damaged_oldest_marker)."""
    lake, root = _lake(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("0")
    os.symlink(outside, os.path.join(root, OLDEST_VERSION))
    for call in (lake.expire, lambda: Lakehouse.open(lake.url).latest_version()):
        with pytest.raises(SymlinkInRootError, match=r"_oldest_version\.txt .*trinityfs expire"):
            within(WAIT, call)
    report = within(WAIT, lake.fsck)
    assert [(p.kind, p.location) for p in report.errors] == [("marker", OLDEST_VERSION)]
    assert "trinityfs expire" in report.errors[0].message
    assert report.versions_checked == 3
    assert outside.read_text() == "0"
