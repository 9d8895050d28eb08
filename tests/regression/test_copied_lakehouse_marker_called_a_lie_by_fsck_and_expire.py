"""A lakehouse copied without its mtimes (`cp -r`, `aws s3 sync`), its oldest marker
copied a few seconds before the root it names: readers confirm an outrun by the root's
created_at_millis since txn6's b50db11/8cf7832 (trinityfs/txn/outrun.py), but fsck and
expiration judged by the mtimes alone (lifecycle/markers.py). fsck called the true
marker a lie (an error) and expiration "repaired" it down to the oldest root listed,
making versions the original refuses as expired readable again. Now markers.py asks the
same question as readers, with the root's stamp."""

from __future__ import annotations

from copied_lakes import copy_without_mtimes, expired_halfway

from trinityfs import Lakehouse

NO_FSYNC = {"fsync": False}


def _copy(tmp_path) -> str:
    """Versions 0..7; expiration wrote marker 5 and crashed before deleting roots; then
    a copy made two hours later, the marker copied 5 s before everything else."""
    src = expired_halfway(str(tmp_path / "src"))
    dst = str(tmp_path / "copy")
    copy_without_mtimes(src, dst, marker_first_by=5)
    return dst


def test_fsck_and_expire_agree_with_readers_on_a_copy(tmp_path) -> None:
    copy = _copy(tmp_path)
    lake = Lakehouse.open(copy, storage_options=NO_FSYNC)
    assert lake.oldest_version() == 5  # readers (txn6's fix)
    report = lake.fsck()
    assert report.ok, [p.to_dict() for p in report.errors]
    assert report.oldest_version == 5
    expired = lake.expire(dry_run=True)
    assert not expired.marker_problems
    assert expired.previous_oldest_version == 5
