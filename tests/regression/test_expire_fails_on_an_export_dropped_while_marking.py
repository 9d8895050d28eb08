"""Regression: an export dropped while expiration was marking made the expiration fail
with "expiration stopped before sweeping: 1 referenced file(s) are missing
(_export_<name>.arrow, referenced by export <name>); run fsck", though nothing was
wrong (fsck clean). Expiration read the export's record from the latest LakehouseDef,
then drop_export committed the record's removal and deleted the root copy before
marking reached it. Found by tests/lifecycle/test_lifecycle_shared_handle.py (one
handle, an exporter thread dropping exports while another expires)."""

from __future__ import annotations

from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import StorageFileNotFoundError
from trinityfs.lifecycle.mark import Marker


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, order=4)
    lake.create_namespace("ns")
    for i in range(20):
        lake.create_table("ns", f"t{i}")
    return lake


def _drop_when_marking_reaches(monkeypatch, url: str, name: str) -> list[str]:
    real = Marker.mark_reread  # how marking reads an export's root copy
    dropped: list[str] = []

    def mark_reread(self, location, referrer=""):
        if referrer == f"export {name}" and not dropped:
            dropped.append(name)
            Lakehouse.open(url).drop_export(name)  # another handle, right now
        return real(self, location, referrer)

    monkeypatch.setattr(Marker, "mark_reread", mark_reread)
    return dropped


def test_export_dropped_while_expiration_marks(tmp_path, monkeypatch) -> None:
    lake = _lake(tmp_path)
    lake.export("keep", version=12)
    lake.export("gone", version=15, mode="partial")
    lake.create_table("ns", "after")
    pinned = lake.at(export="keep").list_tables("ns")
    dropped = _drop_when_marking_reaches(monkeypatch, lake.url, "gone")
    try:
        with expiring_later():
            report = Lakehouse.open(lake.url).expire(
                max_age_millis=0, min_versions=3, grace_millis=0
            )
    except StorageFileNotFoundError as exc:
        raise AssertionError(f"a concurrent drop_export failed the expiration: {exc}") from None
    monkeypatch.undo()
    assert dropped == ["gone"]
    assert not report.missing
    fresh = Lakehouse.open(lake.url)
    assert [e.name for e in fresh.exports()] == ["keep"]
    assert fresh.at(export="keep").list_tables("ns") == pinned
    assert fresh.fsck().ok


def test_export_root_missing_while_still_recorded_still_stops_expiration(tmp_path) -> None:
    """What the fix must keep: a recorded export whose root copy is gone is damage."""
    lake = _lake(tmp_path)
    lake.export("broken", version=12)
    lake.storage.delete("_export_broken.arrow")
    with expiring_later():
        try:
            Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=3, grace_millis=0)
        except StorageFileNotFoundError as exc:
            assert "_export_broken.arrow" in str(exc)
        else:
            raise AssertionError("expiration swept although a recorded export is damaged")
