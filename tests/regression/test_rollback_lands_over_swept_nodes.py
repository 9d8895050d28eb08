"""Regression (issue 10, item 5): a rollback to a version that a concurrent expiration
was removing committed a root over swept nodes: the new latest version was unreadable
and every later commit failed with EIO. The rollback re-validates its target inside
the commit (before and after creating the root) and fails cleanly instead."""

from __future__ import annotations

import pytest
from expire_clock import expiring_later

from trinityfs import Lakehouse
from trinityfs.errors import VersionNotFoundError
from trinityfs.tree import NodeStore
from trinityfs.txn.roots import RootStore


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False}, order=4)
    lake.create_namespace("ns")
    for i in range(30):
        lake.create_table("ns", f"t{i}", {"properties": {"gen": "1"}})
    return lake


def _expire_everything_but_latest(url: str) -> None:
    with expiring_later():
        Lakehouse.open(url).expire(max_age_millis=0, min_versions=1, grace_millis=0)


def _still_healthy(lake: Lakehouse, before: int) -> None:
    fresh = Lakehouse.open(lake.url)
    assert len(fresh.list_tables("ns")) >= 1
    for name in fresh.list_tables("ns"):
        fresh.describe_table("ns", name)
    fresh.create_table("ns", "later")  # commits still work
    assert fresh.fsck().ok, fresh.fsck().errors


@pytest.mark.parametrize("when", ["while_building", "after_create"])
def test_rollback_racing_expire_fails_cleanly(tmp_path, monkeypatch, when) -> None:
    lake = _lake(tmp_path)
    target = 5
    for i in range(30):
        lake.replace_table("ns", f"t{i}", {"properties": {"gen": "2"}})
    before = lake.latest_version()
    real_create = RootStore.create
    real_write_nodes = NodeStore.write_new_nodes
    fired = []

    def racing_write_nodes(self, *args, **kwargs):
        # the rollback loaded its target and is building the new root
        if when == "while_building" and not fired:
            fired.append("expired")
            _expire_everything_but_latest(lake.url)
        return real_write_nodes(self, *args, **kwargs)

    def racing_create(self, version, data):
        created = real_create(self, version, data)
        if when == "after_create" and not fired:
            fired.append(version)
            _expire_everything_but_latest(lake.url)
        return created

    monkeypatch.setattr(RootStore, "create", racing_create)
    monkeypatch.setattr(NodeStore, "write_new_nodes", racing_write_nodes)
    if when == "while_building":
        # the expiration removed the target before the root was created: refused
        with pytest.raises(VersionNotFoundError, match="expired"):
            lake.rollback(target)
        expected = "2"
    else:
        # the expiration ran after the root landed: it saw the new root and kept its
        # files, so the rollback stands (checked file by file)
        lake.rollback(target)
        expected = "1"
    monkeypatch.undo()
    assert fired
    _still_healthy(lake, before)
    fresh = Lakehouse.open(lake.url)
    assert fresh.describe_table("ns", "t0").properties["gen"] == expected


def test_rollback_whose_files_were_swept_after_landing_is_undone(tmp_path, monkeypatch):
    """The worst case: right after the root landed, the target is expired AND the
    files only it reached are swept (an expiration that did not see our root)."""
    lake = _lake(tmp_path)
    for i in range(30):
        lake.replace_table("ns", f"t{i}", {"properties": {"gen": "2"}})
    real_create = RootStore.create
    fired = []

    def create_then_sweep_blind(self, version, data):
        created = real_create(self, version, data)
        if not fired:
            fired.append(version)
            # an expiration that marked before our root existed: hide it while it runs
            location = lake.storage.url_of(f"_{format(version, '064b')[::-1]}.arrow")
            path = location[len("file://") :]
            import os

            os.rename(path, path + ".hidden")
            try:
                _expire_everything_but_latest(lake.url)
            finally:
                os.rename(path + ".hidden", path)
        return created

    monkeypatch.setattr(RootStore, "create", create_then_sweep_blind)
    with pytest.raises(VersionNotFoundError, match="undone"):
        lake.rollback(5)
    monkeypatch.undo()
    fresh = Lakehouse.open(lake.url)
    assert fresh.describe_table("ns", "t0").properties["gen"] == "2"
    fresh.create_table("ns", "later")
    # the undone root stays in the history, unreadable, and fsck says exactly that
    broken = {p.version for p in fresh.fsck().errors if p.version is not None}
    assert broken <= {fired[0]}
