"""fsck reported "export 'r2': root node file is missing" (an error, ok false) for an
intact export that another process dropped and created again under its name while fsck
ran (life6's race probe: export churn on reused names next to fsck). The root of a
minimal export is named after the export (`_export_<name>.arrow`), so when both passes
listed the root between the drop and the create, and read the record after the create,
the error was "confirmed". A file the listing missed was called missing without a second
look; so were definitions written by a commit landing after the listing.

Now such a file is looked at again: there now, it is checked like any other; still gone
while versions were committed since the record was read, it is a warning (kind
"changed"); gone with nothing committed since, it is the error it was."""

from __future__ import annotations

import importlib
import threading

import pytest

from trinityfs import Lakehouse

inventory_module = importlib.import_module("trinityfs.lifecycle.inventory")


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    lake.export("r2")
    return lake


def _around_each_listing(monkeypatch, lake: Lakehouse, before, after) -> None:
    real = inventory_module.Inventory.scan.__func__

    def scan(cls, storage, prefix=""):
        top = storage.url == lake.storage.url and prefix == ""
        if top:
            before()
        inventory = real(cls, storage, prefix)
        if top:
            after()
        return inventory

    monkeypatch.setattr(inventory_module.Inventory, "scan", classmethod(scan))


def test_export_created_again_after_the_listing_is_no_error(tmp_path, monkeypatch) -> None:
    lake = _lake(tmp_path)
    _around_each_listing(
        monkeypatch, lake, lambda: lake.drop_export("r2"), lambda: lake.export("r2")
    )
    report = lake.fsck()
    assert report.ok, [p.to_dict() for p in report.errors]
    assert "r2" in report.exports_checked


def test_export_dropped_after_its_record_was_read_is_a_warning(tmp_path, monkeypatch) -> None:
    """A guard (passes on 78274d0 too, by the second pass): the root is gone from the
    listing and the export is dropped while fsck looks at it again."""
    lake = _lake(tmp_path)
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    real = lake.engine.storage.read_if_regular
    dropped = []

    def read_if_regular(location):
        if location == "_export_r2.arrow" and not dropped:
            dropped.append(other.drop_export("r2"))
        return real(location)

    # the listing did not show the root (deleted under it), the record still names it
    _around_each_listing(
        monkeypatch,
        lake,
        lambda: lake.storage.delete("_export_r2.arrow") if not dropped else None,
        lambda: None,
    )
    monkeypatch.setattr(lake.engine.storage, "read_if_regular", read_if_regular)
    report = lake.fsck()
    assert dropped
    assert not [p for p in report.errors if p.kind == "export"], report.errors
    assert [p for p in report.warnings if p.kind == "changed" and "r2" in p.message]


def test_a_really_missing_export_root_is_still_an_error(tmp_path) -> None:
    lake = _lake(tmp_path)
    lake.storage.delete("_export_r2.arrow")
    report = lake.fsck()
    assert not report.ok
    errors = [p for p in report.errors if p.kind == "export"]
    assert errors and "root node file is missing" in errors[0].message


def test_definitions_of_a_commit_landing_after_the_listing_are_not_missing(
    tmp_path, monkeypatch
) -> None:
    lake = _lake(tmp_path)
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    landed = []

    def commit() -> None:
        landed.append(other.create_table("ns", f"late{len(landed)}"))

    _around_each_listing(monkeypatch, lake, lambda: None, commit)
    report = lake.fsck()
    assert landed
    assert report.ok
    assert not report.warnings, [p.to_dict() for p in report.warnings]


def test_export_root_deleted_between_listing_and_reading_is_no_error(tmp_path, monkeypatch) -> None:
    """Listed, then dropped (and created again) right before fsck reads it: a full
    export's root is named after its version, so both passes may meet the same name
    ("export 'r1': root unreadable" in life6's probe, moto S3 and local)."""
    mark = importlib.import_module("trinityfs.lifecycle.mark")
    lake = _lake(tmp_path)
    version = lake.latest_version()
    lake.export("r1", version, mode="full")
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    real = mark.Marker.mark_root
    churned = []
    seen: set[int] = set()

    def mark_root(self, location):
        if location.startswith("_0") or "/" in location:  # not the lakehouse's own roots
            return real(self, location)
        if self.storage.url.rstrip("/").endswith("_exports/r1") and id(self) not in seen:
            seen.add(id(self))  # once per pass (each pass has its own marker)
            other.drop_export("r1")
            churned.append(location)
            try:
                return real(self, location)
            finally:
                other.export("r1", version, mode="full")
        return real(self, location)

    monkeypatch.setattr(mark.Marker, "mark_root", mark_root)
    report = lake.fsck()
    assert churned
    assert report.ok, [p.to_dict() for p in report.errors]


@pytest.mark.parametrize("mode", ["minimal", "full"])
def test_a_really_missing_export_root_is_an_error_while_others_commit(tmp_path, mode) -> None:
    """Review F3 of 61bc96b/6692116 (the bug never existed on 78274d0): the warning was
    given whenever anything committed during fsck, so a lost export root of a busy
    lakehouse was "ok". Now only a record that no longer names the root is a change."""
    lake = _lake(tmp_path)
    lake.export("gone", mode=mode)
    record = lake.engine.snapshot().lakehouse_def.exported_snapshots["gone"]
    lake.storage.delete(record)
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    stop = threading.Event()

    def commit() -> None:
        i = 0
        while not stop.is_set():
            other.create_table("ns", f"busy{i}")
            i += 1

    worker = threading.Thread(target=commit)
    worker.start()
    try:
        report = lake.fsck()
    finally:
        stop.set()
        worker.join()
    assert not report.ok
    assert [p for p in report.errors if p.kind == "export" and "'gone'" in p.message]
