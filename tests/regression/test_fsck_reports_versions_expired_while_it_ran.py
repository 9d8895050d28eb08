"""fsck running while an expiration (or an export drop) changes the lakehouse reported
the files that change removed as missing: on a healthy lakehouse, 42 of 60 checks run
beside a writer that commits, exports, drops exports and expires said "errors" (files of
versions expired mid-check, "previous_root of version N is missing", exports dropped
mid-check), and a definition removed after the listing was reported as "corrupt".

fsck now runs a second pass when the first finds errors and reports as errors only what
both passes found; the rest is a warning of kind "changed".
"""

from __future__ import annotations

from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.format.paths import root_node_file


def _lake(tmp_path, versions: int = 12) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(versions):
        lake.create_table("ns", f"t{i}", {"table_format": "ICEBERG"})
        if i % 3 == 0:
            lake.drop_table("ns", f"t{i}")
    return lake


def _expire_once_after_oldest_is_read(monkeypatch, lake: Lakehouse) -> list[int]:
    """Expire every version but the last 2 right after fsck has read the oldest one."""
    other = Lakehouse.open(lake.url, storage_options={"fsync": False})
    roots = lake.engine.roots
    real = roots.oldest_version
    expired: list[int] = []

    def oldest_then_expire() -> int:
        value = real()
        if not expired:
            with expiring_later():
                report = other.expire(max_age_millis=0, min_versions=2, grace_millis=0)
            expired.append(report.oldest_version)
        return value

    monkeypatch.setattr(roots, "oldest_version", oldest_then_expire)
    return expired


def test_versions_expired_while_fsck_runs_are_not_errors(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    expired = _expire_once_after_oldest_is_read(monkeypatch, lake)
    report = lake.fsck()
    assert expired and expired[0] > 1  # the expiration really ran mid-check
    assert report.ok, [p.to_dict() for p in report.errors]
    assert any(w.kind == "changed" for w in report.warnings)
    assert all(p.kind != "corrupt" for p in report.warnings)


def test_a_file_lost_for_good_is_still_an_error_after_the_second_pass(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    latest = lake.latest_version()
    definition = lake.snapshot().object_location("table", "ns", "t11")
    (tmp_path / "lake" / definition).unlink()
    expired = _expire_once_after_oldest_is_read(monkeypatch, lake)
    report = lake.fsck()
    assert expired
    assert not report.ok
    assert [(p.kind, p.location) for p in report.errors] == [("missing", definition)]
    assert report.affected_versions == {latest: [definition]}


def test_a_healthy_quiet_lakehouse_is_checked_once(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    reads: list[str] = []
    storage = lake.engine.storage
    real = storage.read

    def counting(loc, *args, **kwargs):
        reads.append(loc)
        return real(loc, *args, **kwargs)

    monkeypatch.setattr(storage, "read", counting)
    report = lake.fsck()
    assert report.ok and not report.warnings
    assert reads.count(root_node_file(lake.latest_version())) <= 1
