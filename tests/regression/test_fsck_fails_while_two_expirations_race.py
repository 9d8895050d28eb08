"""fsck during two racing expirations (life6's race probe on moto S3, a mid-run fsck):
the slower expiration's lower `_oldest_version.txt` lands after the faster one deleted
the roots below its own, so for a while the marker names a root that is gone, like
every older one, until the slower run repairs it. 35c4c9d made that a warning; review
F4 showed the same state is what a real loss of the oldest readable roots looks like
(the state alone cannot tell them apart), and a false "healthy" is worse than a false
alarm. It stays an error, and now says both: the overlap (repaired by the slower run or
`trinityfs expire`) and, otherwise, which versions were lost."""

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
    assert not report.ok
    marker = [p for p in report.errors if p.location == OLDEST_VERSION]
    assert marker and "says 3" in marker[0].message
    assert "overlapped" in marker[0].message and "3..5 were lost" in marker[0].message
    fresh = Lakehouse.open(lake.url)
    assert fresh.oldest_version() == 6  # readers read from the roots meanwhile
    assert len(fresh.at(version=6).list_tables("ns")) == 5  # t0..t4


def test_roots_lost_above_an_earlier_expirations_marker_are_an_error(tmp_path) -> None:
    """Review F4's case (an error on 78274d0 too): a normal expiration left marker 3,
    then roots 3..8 were lost."""
    lake = _lake(tmp_path)
    for version in range(3):
        lake.storage.delete(root_node_file(version))
    lake.storage.write(OLDEST_VERSION, b"3")
    assert Lakehouse.open(lake.url).fsck().ok
    for version in range(3, 9):
        lake.storage.delete(root_node_file(version))
    report = Lakehouse.open(lake.url).fsck()
    assert not report.ok
    assert [p for p in report.errors if p.location == OLDEST_VERSION]


def test_a_marker_at_a_hole_with_older_roots_is_still_an_error(tmp_path) -> None:
    """A guard (an error on 78274d0 too): no expiration leaves roots below its marker."""
    lake = _lake(tmp_path)
    lake.storage.delete(root_node_file(4))
    lake.storage.write(OLDEST_VERSION, b"4")
    report = Lakehouse.open(lake.url).fsck()
    assert not report.ok
    assert [p for p in report.errors if p.location == OLDEST_VERSION]
