"""cat and open("rb"): the definition as stable JSON that states the kind."""

from __future__ import annotations

import json

import pytest

from trinityfs.fs import content


def test_cat_is_stable_sorted_indented_json(sample):
    data = sample.cat("/sales/orders")
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    value = json.loads(data)
    assert value["kind"] == "table"
    assert value["definition"]["table_format"] == "ICEBERG"
    assert value["definition"]["properties"] == {"owner": "ops"}
    assert data == (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()
    assert sample.cat("/sales/orders") == data  # byte-identical every time
    assert list(value) == ["definition", "kind"]
    # fields at their default value are shown (all fields visible and editable)
    assert value["definition"]["distribution_keys"] == []


def test_cat_of_a_view(sample):
    value = json.loads(sample.cat("/sales/big_orders"))
    assert value["kind"] == "view"
    assert value["definition"]["properties"]["sql"].startswith("select")


def test_cat_matches_the_catalog(sample, lake):
    msg = lake.describe_table("sales", "orders")
    assert sample.cat("/sales/orders") == content.render("table", msg)


def test_cat_ranges_and_many(sample):
    data = sample.cat("/sales/orders")
    assert sample.cat_file("/sales/orders", start=2, end=10) == data[2:10]
    assert sample.cat_file("/sales/orders", start=-5) == data[-5:]
    both = sample.cat(["/sales/orders", "/sales/big_orders"])
    assert set(both) == {"/sales/orders", "/sales/big_orders"}
    assert sample.head("/sales/orders", 5) == data[:5]


def test_cat_old_version(sample):
    sample.pipe("/sales/orders", b'{"kind": "table", "definition": {"table_format": "DELTA"}}')
    assert json.loads(sample.cat("/v/2/sales/orders"))["definition"]["table_format"] == "ICEBERG"
    assert json.loads(sample.cat("/sales/orders"))["definition"]["table_format"] == "DELTA"


def test_cat_errors(sample):
    with pytest.raises(IsADirectoryError):
        sample.cat_file("/sales")
    with pytest.raises(IsADirectoryError):
        sample.cat_file("/")
    with pytest.raises(FileNotFoundError):
        sample.cat_file("/sales/nope")
    with pytest.raises(FileNotFoundError):
        sample.cat_file("/nope")


def test_open_for_reading(sample):
    with sample.open("/sales/orders", "rb") as f:
        assert f.read() == sample.cat("/sales/orders")
        assert f.size == sample.size("/sales/orders")
        assert f.readable() and not f.writable()
        f.seek(0)
        assert f.read(1) == b"{"
    with sample.open("trinity://sales/orders", "r") as f:  # text mode
        assert json.load(f)["kind"] == "table"
    with pytest.raises(FileNotFoundError):
        sample.open("/sales/nope", "rb")
    with pytest.raises(ValueError, match="mode 'ab'"):
        sample.open("/sales/orders", "ab")


def test_get_to_a_local_file(sample, tmp_path):
    target = tmp_path / "orders.json"
    sample.get("/sales/orders", str(target))
    assert target.read_bytes() == sample.cat("/sales/orders")
