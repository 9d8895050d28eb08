"""An `_oldest_version.txt` from the future (it said 6 while the latest was 3: a bit
flip, a marker restored from a later backup) that commits caught up with: expiration and
fsck take it for the lie it is since 8a3bdab, but readers (RootStore.oldest_version)
trusted it as soon as root 6 existed: versions 0..5, all still there, were refused as
expired (`at(2)`, the version list, time travel), and a distributed transaction begun on
version 3 before the catch-up could not commit ("version 3 was expired"), until the next
expiration rewrote the marker. Now readers apply the same rule as expiration: a marker
written more than 2 s (store mtimes) before the root it names is a lie, and the oldest
readable version is then the oldest root listed.
"""

from __future__ import annotations

import os
import time

import pytest

from trinityfs import Lakehouse
from trinityfs.format.paths import OLDEST_VERSION

NO_FSYNC = {"fsync": False}


def _marker_from_the_future(root: str) -> None:
    marker = os.path.join(root, OLDEST_VERSION)
    with open(marker, "w") as f:
        f.write("6")  # a lie: the latest version is 3
    past = time.time() - 60
    os.utime(marker, (past, past))  # written a minute before the roots catch up


@pytest.fixture
def root(tmp_path) -> str:
    return str(tmp_path / "lake")


def test_versions_below_an_outrun_marker_stay_readable(root) -> None:
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    for i in range(3):
        lake.create_namespace(f"n{i}")  # 1..3
    _marker_from_the_future(root)
    for i in range(3, 6):
        lake.create_namespace(f"n{i}")  # 4..6: root 6 now exists
    fresh = Lakehouse.open(root, storage_options=NO_FSYNC)
    assert fresh.oldest_version() == 0
    assert list(fresh.at(version=2).list_namespaces()) == ["n0", "n1"]
    assert [v.version for v in fresh.versions()] == list(range(7))
    assert lake.oldest_version() == 0  # the handle that committed, too


def test_a_distributed_transaction_on_a_version_below_it_commits(root) -> None:
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    for i in range(3):
        lake.create_namespace(f"n{i}")  # 1..3
    txn = lake.begin_distributed(txn_id="t1")  # on version 3
    txn.create_table("n0", "t")
    txn.save()
    _marker_from_the_future(root)
    for i in range(3, 6):
        lake.create_namespace(f"n{i}")  # 4..6
    loaded = Lakehouse.open(root, storage_options=NO_FSYNC).load_distributed("t1")
    assert loaded.commit() == 7
    assert Lakehouse.open(root).list_tables("n0") == ["t"]


@pytest.mark.s3
def test_on_s3_by_the_store_clock(s3_storage_options, s3_bucket) -> None:
    url = f"s3://{s3_bucket}/lake-outrun-{time.time_ns()}"
    lake = Lakehouse.create(url, storage_options=dict(s3_storage_options))
    for i in range(3):
        lake.create_namespace(f"n{i}")  # 1..3
    lake.storage.write(OLDEST_VERSION, b"6")  # a lie: the latest version is 3
    time.sleep(3.5)  # S3 keeps whole seconds
    for i in range(3, 6):
        lake.create_namespace(f"n{i}")  # 4..6
    fresh = Lakehouse.open(url, storage_options=dict(s3_storage_options))
    assert fresh.oldest_version() == 0
    assert list(fresh.at(version=2).list_namespaces()) == ["n0", "n1"]
