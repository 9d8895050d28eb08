"""A rollback whose target version was expired (and its files swept) after the rollback
read the target's root but before it verified the target's definitions raised a bare
StorageFileNotFoundError naming a definition file, although nothing was committed and
what happened is plain: the target was expired. Seen on S3 (moto) in
tests/lifecycle/test_lifecycle_rollback_processes.py, 3 of 8 runs: rollback workers
reported 'StorageFileNotFoundError: file not found: .../table-ns-t3-....binpb'.
Now the rollback checks the target against the oldest readable version when a file is
missing there and says VersionNotFoundError "... was expired ...; nothing was committed"
(a missing file in a target that was not expired still raises StorageFileNotFoundError)."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

import trinityfs.txn.publish as publish
from trinityfs import Lakehouse
from trinityfs.errors import StorageFileNotFoundError, VersionNotFoundError


def _lake(tmp_path) -> str:
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(6):
        lake.create_table("ns", f"t{i}", {"properties": {"i": str(i)}})
    for i in range(6):
        lake.replace_table("ns", f"t{i}", {"properties": {"i": "new"}})
    return url


def test_a_rollback_whose_target_is_expired_before_its_verification(tmp_path, monkeypatch):
    url = _lake(tmp_path)
    real = publish.verify_newly_reached
    fired: list[int] = []

    def expire_first(engine, target, latest, verified):
        if not fired:
            fired.append(target.version)
            with expiring_later(10):
                Lakehouse.open(url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
        return real(engine, target, latest, verified)

    monkeypatch.setattr(publish, "verify_newly_reached", expire_first)
    roller = Lakehouse.open(url)  # holds none of the target's files in memory
    before = roller.latest_version()
    with pytest.raises(VersionNotFoundError, match=r"version 4 was expired.*nothing was committed"):
        roller.rollback(4)
    assert fired == [4]
    assert Lakehouse.open(url).latest_version() == before


def test_a_file_missing_from_a_kept_target_still_names_the_file(tmp_path):
    url = _lake(tmp_path)
    lake = Lakehouse.open(url)
    view = lake.at(4)
    location = view.object_location("table", "ns", "t0")
    (tmp_path / "lake" / location).unlink()
    with pytest.raises(StorageFileNotFoundError, match="table-ns-t0-"):
        Lakehouse.open(url).rollback(4)
