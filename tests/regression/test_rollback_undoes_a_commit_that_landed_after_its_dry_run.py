"""A rollback rebuilt on whatever latest version it found: a commit that landed between
a user's `trinityfs rollback --dry-run` (which showed what would change) and the
rollback was undone without notice. Now `Lakehouse.rollback(version, expected_latest=N)`
raises CommitConflictError naming the version that moved the lakehouse when the latest
is not N, checked by the create of root N+1 itself (a commit landing between the
rollback's read of the latest and its create is caught too); `trinityfs rollback N
--if-latest M` says so in one line and exits 1, and `--dry-run` prints the latest version
it saw and the guarded command to run.

Also (the lead's finding): a rollback to a tree equal to the latest one (`rollback(latest)`,
whose dry run says "nothing") committed a new, empty version; it now commits nothing and
returns the latest version, like every other write that changes nothing."""

from __future__ import annotations

import json
import threading

import pytest
from regression_cli import run, sample

from trinityfs import Lakehouse
from trinityfs.errors import CommitConflictError
from trinityfs.txn.roots import RootStore

NO_FSYNC = {"fsync": False}


def _lake(tmp_path) -> tuple[Lakehouse, str]:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    lake.create_namespace("a")  # 1
    lake.create_namespace("b")  # 2
    lake.create_namespace("c")  # 3
    return lake, root


def test_a_commit_after_the_read_of_latest_is_a_conflict(tmp_path) -> None:
    lake, root = _lake(tmp_path)
    other = Lakehouse.open(root, storage_options=NO_FSYNC)
    other.create_namespace("d")  # 4: lands after the user looked (latest 3)
    with pytest.raises(CommitConflictError, match="version 4") as caught:
        lake.rollback(1, expected_latest=3)
    assert caught.value.version == 4
    assert lake.latest_version(fresh=True) == 4
    assert list(lake.list_namespaces()) == ["a", "b", "c", "d"]


def test_a_commit_landing_inside_the_rollback_is_a_conflict(tmp_path, monkeypatch) -> None:
    """The commit lands after the rollback read the latest version (3) and built root 4,
    before it creates it: only the conditional create of root 4 can see that."""
    lake, root = _lake(tmp_path)
    other = Lakehouse.open(root, storage_options=NO_FSYNC)
    real_create = RootStore.create
    state = threading.local()
    landed: list[int] = []

    def create(self, version, data, *args, **kwargs):
        if not landed and not getattr(state, "inside", False):
            state.inside = True
            try:
                landed.append(other.create_namespace("d"))
            finally:
                state.inside = False
        return real_create(self, version, data, *args, **kwargs)

    monkeypatch.setattr(RootStore, "create", create)
    with pytest.raises(CommitConflictError, match="version 4") as caught:
        lake.rollback(1, expected_latest=3)
    assert landed == [4] and caught.value.version == 4
    monkeypatch.undo()
    fresh = Lakehouse.open(root, storage_options=NO_FSYNC)
    assert fresh.latest_version() == 4
    assert list(fresh.list_namespaces()) == ["a", "b", "c", "d"]


def test_the_guard_passes_when_latest_is_as_expected(tmp_path) -> None:
    lake, _root = _lake(tmp_path)
    assert lake.rollback(1, expected_latest=3) == 4
    assert list(lake.list_namespaces()) == ["a"]
    with pytest.raises(CommitConflictError, match="latest version is 4"):
        lake.rollback(2, expected_latest=7)  # a latest that was never seen: refused too


def test_a_rollback_to_the_latest_tree_commits_nothing(tmp_path) -> None:
    lake, _root = _lake(tmp_path)
    assert lake.rollback(3) == 3
    assert lake.rollback(1) == 4
    assert lake.rollback(1) == 4  # the tree of 1 is the latest one already
    assert lake.rollback(4, expected_latest=4) == 4
    assert lake.latest_version(fresh=True) == 4


def test_cli_dry_run_names_the_latest_and_if_latest_refuses_a_moved_lakehouse(tmp_path) -> None:
    root = str(tmp_path / "lake")
    sample(root)  # versions 0..3
    dry = run(root, "rollback", "1", "--dry-run")
    assert dry.status == 0, dry.err
    assert "latest version 3" in dry.out, dry.out
    assert dry.out.splitlines()[-1].strip() == f"trinityfs --root {root} rollback 1 --if-latest 3"
    data = json.loads(run(root, "--json", "rollback", "1", "--dry-run").out)
    assert data["from"] == 3 and data["command"].endswith("rollback 1 --if-latest 3")

    assert run(root, "mkdir", "/late").status == 0  # version 4
    refused = run(root, "rollback", "1", "--if-latest", "3")
    assert refused.status == 1 and refused.out == "", refused
    assert len(refused.err.strip().splitlines()) == 1, refused.err
    assert "version 4" in refused.err and "nothing" in refused.err, refused.err
    assert run(root, "ls", "/").out.split() == ["late/", "namespace", "sales/", "namespace"]

    done = run(root, "rollback", "1", "--if-latest", "4")
    assert done.out == "rollback to version 1: version 5\n", done
    same = run(root, "rollback", "1")
    assert same.status == 0 and same.out == "rollback to version 1: no change\n", same
    assert run(root, "rollback", "1", "--if-latest", "-1").status == 2
