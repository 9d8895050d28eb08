"""cp: copies definitions (any version to the latest); restores old ones; one commit."""

from __future__ import annotations

import json

import pytest

DELTA = b'{"kind": "table", "definition": {"table_format": "DELTA"}}'


def test_cp_a_table_gets_a_new_id(sample, lake):
    sample.cp("/sales/orders", "/staging/orders")
    assert lake.latest_version() == 5
    old, new = lake.describe_table("sales", "orders"), lake.describe_table("staging", "orders")
    assert new.id and new.id != old.id
    new.id = old.id
    assert new == old


def test_cp_restores_an_old_definition(sample, lake):
    fs = sample
    original = fs.cat("/sales/orders")
    fs.pipe("/sales/orders", DELTA)
    fs.cp("/v/4/sales/orders", "/sales/orders")
    assert fs.cat("/sales/orders") == original
    assert lake.latest_version() == 6
    fs.cp("/v/4/sales/orders", "/sales/orders")  # unchanged: no commit
    assert lake.latest_version() == 6


def test_cp_restores_a_dropped_object_with_its_id(sample, lake):
    fs = sample
    original = fs.cat("/sales/orders")
    fs.rm("/sales", recursive=True)
    fs.cp("/v/4/sales/orders", "/sales/orders")  # the namespace is created again
    assert fs.cat("/sales/orders") == original


def test_cp_a_view_keeps_its_kind(sample):
    sample.cp("/sales/big_orders", "/staging/b")
    assert json.loads(sample.cat("/staging/b"))["kind"] == "view"


def test_cp_recursive_is_one_commit(sample, lake):
    sample.cp("/sales", "/copy", recursive=True)
    assert lake.latest_version() == 5
    assert sample.ls("/copy", detail=False) == ["/copy/big_orders", "/copy/orders"]
    assert sample.info("/copy")["properties"] == {"owner": "analytics"}


def test_cp_glob_and_list(sample, lake):
    sample.cp(sample.glob("/sales/*"), "/staging/")  # patterns: explicit
    assert sample.ls("/staging", detail=False) == ["/staging/big_orders", "/staging/orders"]
    sample.cp(["/sales/orders", "/sales/big_orders"], ["/staging/a", "/staging/b"])
    assert lake.latest_version() == 6


def test_cp_errors(sample, lake):
    with pytest.raises(FileNotFoundError):
        sample.cp("/sales/nope", "/sales/x")
    with pytest.raises(PermissionError):
        sample.cp("/sales/orders", "/v/2/sales/x")
    with pytest.raises(PermissionError):
        sample.cp("/sales/orders", "/sales/orders/x")
    assert lake.latest_version() == 4


def test_copy_of_a_whole_old_version(sample, lake):
    sample.rm("/", recursive=True)
    sample.cp("/v/4/", "/", recursive=True)
    assert sample.find("/", withdirs=True) == [
        "/sales",
        "/sales/big_orders",
        "/sales/orders",
        "/staging",
    ]
    assert lake.latest_version() == 6
