"""An expiring process whose clock ran ahead of the store's by more than the margin
(min(60 s, grace/4)) took the writers' young files, stamped by the store, for old: it
swept the definition files of commits still in flight, which then landed acknowledged
and pointing at deleted files (life5 saw it on moto S3 with expiration 12 s ahead at
txn_ttl_millis 10 s). Expiration now measures how far its clock runs ahead of the store
(a probe file's mtime, `Storage.clock_ahead_millis`) and moves its cutoff back by that."""

from __future__ import annotations

import time

import trinityfs.storage.core as storage_core
from trinityfs import Lakehouse
from trinityfs.format.definitions import encode_definition
from trinityfs.format.paths import new_definition_location
from trinityfs.format.trinitylake_pb2 import TableDef

AHEAD_SECONDS = 120.0


def _in_flight_file(lake: Lakehouse) -> str:
    """A definition file as a commit writes it before it creates its root."""
    data = encode_definition(TableDef(id="in-flight", table_format="ICEBERG"))
    location = new_definition_location("table", "ns", "t", data)
    lake.storage.write_immutable(location, data)
    return location


def _clock_ahead(monkeypatch) -> None:
    """This process's clock runs AHEAD_SECONDS ahead of the store's (both the clock
    expiration stamps with and the one it compares a probe's mtime with)."""
    import importlib

    expire_module = importlib.import_module("trinityfs.lifecycle.expire")
    real_now, real_time = expire_module.now_millis, time.time
    monkeypatch.setattr(expire_module, "now_millis", lambda: real_now() + AHEAD_SECONDS * 1000)
    monkeypatch.setattr(storage_core.time, "time", lambda: real_time() + AHEAD_SECONDS)


def test_young_files_survive_an_expiration_whose_clock_runs_ahead(where, monkeypatch):
    url, options = where
    lake = Lakehouse.create(url, storage_options=options, txn_ttl_millis=10_000)
    lake.create_namespace("ns")
    location = _in_flight_file(lake)
    _clock_ahead(monkeypatch)
    report = lake.expire(max_age_millis=0, min_versions=1)
    assert location not in report.removed
    assert lake.storage.exists(location)
    assert not [f for f in lake.storage.list("") if ".trinityfs-probe-" in f.location]


def test_without_skew_nothing_moves(where):
    url, options = where
    lake = Lakehouse.create(url, storage_options=options)
    assert lake.storage.clock_ahead_millis() <= 1000  # object stores keep whole seconds
