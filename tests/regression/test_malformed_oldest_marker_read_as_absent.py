"""A malformed `_oldest_version.txt` (a bit flip, zero bytes after a crash with fsync
off, garbage) was read as absent, that is "nothing was expired": a reader then trusted
any root it found, so a version whose expiration had begun (its root still there, its
files about to be swept) was read and could be pinned or rolled back to, and `expire`
rewrote the marker to the first root listed, making expired versions readable again
(helper rate4's report, left open in the seventh session).

The marker bounds which versions may be read, so a malformed one is now refused like
one that is no regular file: CorruptFileError naming the file and the repair, from
readers, commits that read it and expiration (which leaves it as it is); fsck reports it
as an error with the oldest version the roots say and still checks everything else
(docs/FORMAT-CHOICES.md "A malformed oldest marker")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, CorruptFileError
from trinityfs.format.paths import OLDEST_VERSION, root_node_file
from trinityfs.txn.roots import RootStore

DAMAGES = {
    "bit-flip": b"t",  # "4" (0x34) with bit 6 flipped
    "zero-bytes": b"",
    "garbage": b"\xff\xfe4",
    "negative": b"-4",
    "two-numbers": b"4 5",
}


def _expired_lake(tmp_path: Path) -> tuple[Lakehouse, int]:
    """Versions 0..6, expired so that the oldest readable version is 4, then root 3
    written back (an expiration that crashed after its marker, before deleting it)."""
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(5):
        lake.create_table("ns", f"t{i}")
    root3 = Path(url) / root_node_file(3)
    saved = root3.read_bytes()
    with expiring_later(10):
        report = Lakehouse.open(url).expire(max_age_millis=0, min_versions=3, grace_millis=0)
    assert report.oldest_version == 4
    root3.write_bytes(saved)
    return lake, 4


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_readers_refuse_a_malformed_oldest_marker_by_name(tmp_path, damage) -> None:
    lake, _oldest = _expired_lake(tmp_path)
    marker = tmp_path / "lake" / OLDEST_VERSION
    marker.write_bytes(DAMAGES[damage])
    for call in (
        lambda: Lakehouse.open(lake.url).latest_version(),
        lambda: Lakehouse.open(lake.url, verify="tree"),
    ):
        with pytest.raises(CorruptFileError, match=r"_oldest_version\.txt.*trinityfs expire"):
            call()
    assert marker.read_bytes() == DAMAGES[damage]


def test_expired_version_not_served_through_a_malformed_marker(tmp_path) -> None:
    lake, oldest = _expired_lake(tmp_path)
    (tmp_path / "lake" / OLDEST_VERSION).write_bytes(DAMAGES["bit-flip"])
    with pytest.raises(CorruptFileError, match=r"_oldest_version\.txt"):
        Lakehouse.open(lake.url).at(oldest - 1).list_tables("ns")


def test_expire_leaves_a_malformed_marker_and_the_roots_alone(tmp_path) -> None:
    """Expiration used to rewrite it to the oldest root listed (3): version 3, whose
    expiration had begun, became readable again."""
    lake, _oldest = _expired_lake(tmp_path)
    marker = tmp_path / "lake" / OLDEST_VERSION
    marker.write_bytes(DAMAGES["zero-bytes"])
    before = sorted(os.listdir(tmp_path / "lake"))
    with pytest.raises(CorruptFileError, match=r"_oldest_version\.txt.*trinityfs expire"):
        Lakehouse.open(lake.url).expire(min_versions=1)
    assert marker.read_bytes() == b""
    assert sorted(os.listdir(tmp_path / "lake")) == before


def test_expire_through_a_warm_handle_refuses_it_too(tmp_path, caplog) -> None:
    """A handle that just committed finds the latest version without reading the
    marker (trust window): expiration must still not take the damaged marker as a lie
    to rewrite."""
    lake, _oldest = _expired_lake(tmp_path)
    lake.create_table("ns", "warm")
    marker = tmp_path / "lake" / OLDEST_VERSION
    marker.write_bytes(DAMAGES["bit-flip"])
    with pytest.raises(CorruptFileError, match=r"_oldest_version\.txt.*trinityfs expire"):
        lake.expire(min_versions=1)
    assert marker.read_bytes() == DAMAGES["bit-flip"]
    assert "rewritten" not in caplog.text


def test_a_commit_whose_marker_check_meets_it_is_ambiguous_not_failed(
    tmp_path, monkeypatch
) -> None:
    """The check after a root landed (did it fill a hole below the marker?) cannot
    tell with a damaged marker: AmbiguousWriteError, since the root is there, never a
    plain error (and on 187bd6c: an acknowledged commit over a marker read as absent)."""
    lake, _oldest = _expired_lake(tmp_path)
    marker = tmp_path / "lake" / OLDEST_VERSION
    writer = Lakehouse.open(lake.url)
    real_create = RootStore.create

    def create_then_damage(self, version, data, *args):
        created = real_create(self, version, data, *args)
        marker.write_bytes(DAMAGES["bit-flip"])
        return created

    monkeypatch.setattr(RootStore, "create", create_then_damage)
    monkeypatch.setattr(RootStore, "confirmed_latest", lambda self, version: False)
    with pytest.raises(AmbiguousWriteError, match=r"version 7 was created"):
        writer.create_table("ns", "late")
    monkeypatch.undo()
    marker.write_text("4")
    assert "late" in Lakehouse.open(lake.url).list_tables("ns")


def test_fsck_reports_it_with_the_repair_and_checks_the_rest(tmp_path) -> None:
    _expired_lake(tmp_path)
    (tmp_path / "lake" / OLDEST_VERSION).write_bytes(DAMAGES["garbage"])
    report = _fsck_of(str(tmp_path / "lake"))
    errors = [p for p in report.errors if p.location == OLDEST_VERSION]
    assert len(errors) == 1 and "readers refuse" in errors[0].message
    assert "trinityfs expire" in errors[0].message
    assert report.latest_version == 6


def test_repair_by_removing_it_and_expiring(tmp_path) -> None:
    lake, _oldest = _expired_lake(tmp_path)
    marker = tmp_path / "lake" / OLDEST_VERSION
    marker.write_bytes(DAMAGES["bit-flip"])
    marker.unlink()
    Lakehouse.open(lake.url).expire(min_versions=1)
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == 6
    assert int(marker.read_text()) == fresh.oldest_version()


def _fsck_of(url: str):
    """fsck through a handle that found no malformed marker when it opened: the marker
    is damaged after Lakehouse.open read it, as it would be between two commands."""
    marker = Path(url) / OLDEST_VERSION
    damaged = marker.read_bytes()
    marker.write_text("4")
    lake = Lakehouse.open(url)
    marker.write_bytes(damaged)
    return lake.fsck()
