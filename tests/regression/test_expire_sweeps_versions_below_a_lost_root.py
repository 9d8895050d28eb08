"""Regression: one root file lost from the middle of the history (a storage fault, a
stray `rm`) made expiration destroy every kept version below it. Marking found the root
missing, took it for a concurrent expiration ("roots disappeared while marking"), marked
again from the version above it only and swept the nodes that the older versions, whose
roots were still there and which retention said to keep, alone reached; the marker then
moved above them. Expiration must stop before sweeping instead (run fsck), as it does
for any other missing file; a policy that keeps nothing below the hole still runs."""

from __future__ import annotations

import importlib

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import StorageFileNotFoundError
from trinityfs.format.paths import OLDEST_VERSION, root_node_file

overlap_module = importlib.import_module("trinityfs.lifecycle.expire_overlap")

HOLE = 30


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, order=4)
    lake.create_namespace("ns")
    for i in range(40):  # creates, then replaces: old versions have nodes of their own
        name = f"t{i % 25}"
        if i < 25:
            lake.create_table("ns", name, {"properties": {"gen": str(i)}})
        else:
            lake.replace_table("ns", name, {"properties": {"gen": str(i)}})
    return lake


def _contents(lake: Lakehouse, version: int) -> dict:
    view = lake.at(version)
    return {
        str(ref): dict(view.read_definition(ref, loc).properties) for ref, loc in view.iter_all()
    }


@pytest.mark.parametrize(
    "policy",
    [
        {"max_age_millis": 10**12, "min_versions": 3},  # every version young enough
        {"max_age_millis": 0, "min_versions": 21},  # the newest 21: from version 20
    ],
    ids=["by_age", "by_count"],
)
def test_lost_root_stops_expiration_before_it_sweeps(tmp_path, monkeypatch, policy) -> None:
    monkeypatch.setattr(overlap_module, "GONE_ROOT_WAITS", (0.01,))
    lake = _lake(tmp_path)
    latest = lake.latest_version()
    kept_from = 0 if policy["min_versions"] == 3 else latest - policy["min_versions"] + 1
    before = {v: _contents(lake, v) for v in range(kept_from, HOLE)}
    lake.storage.delete(root_node_file(HOLE))  # lost: not an expiration (no marker moved)

    with expiring_later(), pytest.raises(StorageFileNotFoundError, match="version 30"):
        Lakehouse.open(lake.url).expire(grace_millis=0, **policy)

    fresh = Lakehouse.open(lake.url)
    for version, contents in before.items():  # every kept version still reads in full
        assert _contents(fresh, version) == contents, f"version {version} lost files"
    marker = int(fresh.storage.read(OLDEST_VERSION)) if fresh.storage.exists(OLDEST_VERSION) else 0
    assert marker <= kept_from
    problems = {e.version for e in fresh.fsck().errors}
    assert problems <= {HOLE, HOLE + 1}, problems  # the hole, nothing else

    # a dry run says what is missing instead of pretending the versions were expired
    with expiring_later():
        dry = Lakehouse.open(lake.url).expire(grace_millis=0, dry_run=True, **policy)
    assert root_node_file(HOLE) in dry.missing
    assert dry.kept_by != "concurrent expiration"


def test_policy_that_keeps_nothing_below_the_hole_still_runs(tmp_path) -> None:
    lake = _lake(tmp_path)
    latest = lake.latest_version()
    lake.storage.delete(root_node_file(HOLE))
    newest = latest - HOLE  # versions HOLE+1..latest
    with expiring_later():
        report = Lakehouse.open(lake.url).expire(
            max_age_millis=0, min_versions=newest, grace_millis=0
        )
    assert report.oldest_version == HOLE + 1
    fresh = Lakehouse.open(lake.url)
    assert fresh.fsck().ok
    assert len(fresh.list_tables("ns")) == 25
