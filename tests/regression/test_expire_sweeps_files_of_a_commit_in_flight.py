"""Regression (issue 10, item 4): `expire --grace-millis N` below a commit's latency
swept the files of a commit in flight (they are written before the retry loop, which
can take tens of seconds under contention); the commit was then acknowledged and the
latest version pointed at a missing file. Expiration never sweeps files younger than
the longest a commit may take (the commit budget, or txn_ttl_millis when shorter),
whatever grace it is given."""

from __future__ import annotations

from trinityfs import Lakehouse
from trinityfs.txn.roots import RootStore


def test_commit_in_flight_survives_expire_with_grace_zero(tmp_path, monkeypatch) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(5):
        lake.create_table("ns", f"t{i}", {"properties": {"i": str(i)}})
    real_create = RootStore.create
    ran = []

    def stalled_create(self, version, data, *flush):  # flush: the commit's first_durable
        # the commit wrote its files, then stalls (contention); expiration runs now
        if not ran:
            ran.append(
                Lakehouse.open(lake.url).expire(max_age_millis=0, min_versions=1, grace_millis=0)
            )
        return real_create(self, version, data, *flush)

    monkeypatch.setattr(RootStore, "create", stalled_create)
    version = lake.create_table("ns", "in_flight", {"properties": {"big": "x" * 1000}})
    monkeypatch.undo()
    assert ran
    fresh = Lakehouse.open(lake.url)
    assert fresh.latest_version() == version
    assert fresh.describe_table("ns", "in_flight").properties["big"] == "x" * 1000
    for i in range(5):
        assert fresh.describe_table("ns", f"t{i}").properties["i"] == str(i)
    assert fresh.fsck().ok
    assert ran[0].policy.grace_millis >= ran[0].policy.grace_floor_millis > 0
