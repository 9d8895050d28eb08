"""mv: renames (ids kept), one commit per call, directories move with their content."""

from __future__ import annotations

import errno

import pytest


def test_mv_a_table_keeps_its_id(sample, lake):
    old = lake.describe_table("sales", "orders")
    sample.mv("/sales/orders", "/sales/orders2")
    assert lake.latest_version() == 5
    moved = lake.describe_table("sales", "orders2")
    assert moved.id == old.id and moved == old
    assert not sample.exists("/sales/orders")


def test_mv_into_another_namespace(sample, lake):
    sample.mv("/sales/big_orders", "/staging/")
    assert sample.info("/staging/big_orders")["kind"] == "view"
    sample.mv("/staging/big_orders", "/staging")  # into an existing directory: same place
    assert sample.exists("/staging/big_orders")
    sample.mv("/sales/orders", "/newns/orders")  # the namespace is created
    assert sample.ls("/newns", detail=False) == ["/newns/orders"]


def test_mv_onto_an_existing_file_replaces_it(sample, lake):
    view_id = lake.describe_view("sales", "big_orders").id
    sample.mv("/sales/big_orders", "/sales/orders")
    assert sample.info("/sales/orders")["kind"] == "view"
    assert lake.describe_view("sales", "orders").id == view_id
    assert lake.latest_version() == 5


def test_mv_a_namespace(sample, lake):
    ns_id = sample.info("/sales")["id"]
    table_id = lake.describe_table("sales", "orders").id
    sample.mv("/sales", "/sales2")
    assert lake.latest_version() == 5
    assert sample.ls("/", detail=False) == ["/sales2", "/staging"]
    info = sample.info("/sales2")
    assert info["id"] == ns_id and info["properties"] == {"owner": "analytics"}
    assert lake.describe_table("sales2", "orders").id == table_id
    assert sample.ls("/sales2", detail=False) == ["/sales2/big_orders", "/sales2/orders"]


def test_mv_many_is_one_commit(sample, lake):
    sample.mv(["/sales/orders", "/sales/big_orders"], "/staging/")
    assert lake.latest_version() == 5
    assert sample.ls("/staging", detail=False) == ["/staging/big_orders", "/staging/orders"]


def test_mv_failures_commit_nothing(sample, lake):
    with pytest.raises(FileNotFoundError):
        sample.mv("/sales/nope", "/sales/x")
    with pytest.raises(PermissionError) as info:
        sample.mv("/v/2/sales/orders", "/sales/x")
    assert info.value.errno == errno.EROFS
    with pytest.raises(PermissionError) as info:
        sample.mv("/sales/orders", "/v/2/sales/x")
    assert info.value.errno == errno.EROFS
    with pytest.raises(PermissionError) as info:
        sample.mv("/sales", "/staging")  # would be /staging/sales: a nested directory
    assert info.value.errno == errno.EPERM
    with pytest.raises(PermissionError):
        sample.mv("/sales/orders", "/sales/orders/x")
    assert lake.latest_version() == 4
    assert sample.exists("/sales/orders")


def test_mv_same_path(sample, lake):
    sample.mv("/sales/orders", "/sales/orders")
    assert lake.latest_version() == 4
