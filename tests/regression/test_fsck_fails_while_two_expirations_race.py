"""fsck said "not ok" while two expirations raced (life6's race probe on moto S3, a
mid-run fsck): the slower expiration's lower `_oldest_version.txt` lands after the
faster one deleted the roots below its own, so for a while the marker names a root that
is gone, like every older one. That is the state the expiration module's argument (f)
describes and the slower run's repair ends; readers see the gone root and read from the
roots, so nothing reads wrong. fsck reported it as an error (confirmed by its second
pass: the window lasts a whole marking and sweep). Now it is a warning naming the
repair; a marker naming a gone root with older roots still there (no expiration leaves
that) stays an error."""

from __future__ import annotations

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION, root_node_file


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(8):
        lake.create_table("ns", f"t{i}")
    return lake  # versions 0..9


def test_a_marker_left_below_roots_a_faster_expiration_deleted(tmp_path) -> None:
    lake = _lake(tmp_path)
    for version in range(6):  # the faster run: marker 6, roots 0..5 deleted
        lake.storage.delete(root_node_file(version))
    lake.storage.write(OLDEST_VERSION, b"3")  # the slower run's marker, written last
    report = Lakehouse.open(lake.url).fsck()
    assert report.ok, [p.to_dict() for p in report.errors]
    marker = [p for p in report.warnings if p.location == OLDEST_VERSION]
    assert marker and "says 3" in marker[0].message and "repair" in marker[0].message
    fresh = Lakehouse.open(lake.url)
    assert fresh.oldest_version() == 6
    assert len(fresh.at(version=6).list_tables("ns")) == 5  # t0..t4


def test_a_marker_at_a_hole_with_older_roots_is_still_an_error(tmp_path) -> None:
    """A guard (an error on 78274d0 too): no expiration leaves roots below its marker."""
    lake = _lake(tmp_path)
    lake.storage.delete(root_node_file(4))
    lake.storage.write(OLDEST_VERSION, b"4")
    report = Lakehouse.open(lake.url).fsck()
    assert not report.ok
    assert [p for p in report.errors if p.location == OLDEST_VERSION]
