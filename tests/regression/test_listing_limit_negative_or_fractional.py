"""`list_tables(ns, limit=-1)` returned [] (as if the namespace were empty), `limit=True`
one name, `limit=2.5` a bare TypeError from a slice. A listing's limit is None or an int
>= 0; anything else is InvalidArgumentError naming it, in snapshots and transactions."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("a")
    with lake.transaction() as txn:
        for name in ("t1", "t2", "t3"):
            txn.create_table("a", name)
    return lake


@pytest.mark.parametrize("limit", [-1, True, False, 2.5, "2"])
def test_bad_limits_are_refused_by_name(lake, limit):
    for call in (
        lambda: lake.list_tables("a", limit=limit),
        lambda: lake.list_views("a", limit=limit),
        lambda: lake.list_namespaces(limit=limit),
        lambda: lake.at(2).list_tables("a", limit=limit),
    ):
        with pytest.raises(InvalidArgumentError, match="limit"):
            call()
    with lake.transaction() as txn, pytest.raises(InvalidArgumentError, match="limit"):
        txn.list_tables("a", limit=limit)


def test_good_limits_still_work(lake):
    assert lake.list_tables("a", limit=0) == []
    assert lake.list_tables("a", limit=2) == ["t1", "t2"]
    assert lake.list_tables("a", limit=None) == ["t1", "t2", "t3"]
    assert lake.list_tables("a", start_after="t1", limit=1) == ["t2"]


@pytest.mark.parametrize("version", [True, False, 1.0, 2.5])
def test_a_version_is_an_int_not_a_bool_or_float(lake, version):
    """`lake.at(True)` and `lake.at(1.0)` opened version 1 (the root cache is keyed by
    version and True == 1.0 == 1); `transaction(version=True)` began at version 1."""
    with pytest.raises(InvalidArgumentError, match="version must be an int"):
        lake.at(version)
    with pytest.raises(InvalidArgumentError, match="version must be an int"):
        lake.transaction(version=version)
