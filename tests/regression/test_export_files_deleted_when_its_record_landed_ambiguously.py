"""Regression: when the commit recording an export had an unknown outcome (its root
landed, the reply was lost and reading it back failed: AmbiguousWriteError), the
export's cleanup deleted the files it had written, although the record may have landed
(here it had): the lakehouse then recorded an export whose root copy was gone. The
export did not read, fsck failed and every expiration stopped with "referenced file(s)
are missing (_export_<name>.arrow) ... run fsck" until the export was dropped. With an
unknown outcome the files must stay (a record that did not land leaves files that
drop_export or expiration reclaims, as after a crash)."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import AmbiguousWriteError, StorageError
from trinityfs.format.paths import parse_root_node_file
from trinityfs.storage import Storage


def _record_lands_ambiguously(monkeypatch, version: int) -> list[str]:
    """The create of root `version` lands but raises, and its read-backs fail."""
    real_create, real_read = Storage.create_if_absent, Storage.read
    hits: list[str] = []

    def create(self, loc, data, **kwargs):
        if not hits and parse_root_node_file(loc) == version:
            hits.append(loc)
            real_create(self, loc, data, **kwargs)
            raise AmbiguousWriteError(f"injected: {loc} landed, the reply was lost")
        return real_create(self, loc, data, **kwargs)

    def read(self, loc, *args, **kwargs):
        if hits and loc == hits[0]:
            raise StorageError("injected: read-back failed")
        return real_read(self, loc, *args, **kwargs)

    monkeypatch.setattr(Storage, "create_if_absent", create)
    monkeypatch.setattr(Storage, "read", read)
    return hits


@pytest.mark.parametrize("mode", ["minimal", "partial", "full"])
def test_export_whose_record_landed_with_an_unknown_outcome(tmp_path, monkeypatch, mode) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, order=4)
    lake.create_namespace("ns")
    for i in range(12):
        lake.create_table("ns", f"t{i}")
    pinned = lake.at(6).list_tables("ns")
    hits = _record_lands_ambiguously(monkeypatch, lake.latest_version() + 1)
    with pytest.raises(AmbiguousWriteError):
        lake.export("e1", version=6, mode=mode)
    monkeypatch.undo()
    assert hits

    fresh = Lakehouse.open(lake.url)
    assert [e.name for e in fresh.exports()] == ["e1"]  # the record did land
    assert fresh.at(export="e1").list_tables("ns") == pinned  # and it reads
    assert fresh.fsck().ok, fresh.fsck().errors[:3]
    with expiring_later():
        fresh.expire(max_age_millis=0, min_versions=1, grace_millis=0)
    assert Lakehouse.open(lake.url).at(export="e1").list_tables("ns") == pinned
