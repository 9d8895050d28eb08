"""A pandas round trip through trinity:// URLs with storage_options."""

from __future__ import annotations

import json

import pytest

pd = pytest.importorskip("pandas")


def test_read_json_of_a_definition(sample):
    options = {"root": sample.root}
    series = pd.read_json("trinity://sales/orders", typ="series", storage_options=options)
    assert series["kind"] == "table"
    assert series["definition"]["table_format"] == "ICEBERG"


def test_round_trip_through_pandas(sample, lake):
    options = {"root": sample.root}
    series = pd.read_json("trinity://sales/orders", typ="series", storage_options=options)
    definition = dict(series["definition"])
    definition["id"] = ""  # a new object gets its own id
    definition["properties"] = {"owner": "pandas"}
    out = pd.Series({"kind": "table", "definition": definition})
    out.to_json("trinity://staging/orders_copy", storage_options=options)
    copy = lake.describe_table("staging", "orders_copy")
    assert copy.table_format == "ICEBERG" and dict(copy.properties) == {"owner": "pandas"}
    assert copy.id and copy.id != lake.describe_table("sales", "orders").id
    # and back: what pandas reads is what the catalog holds
    again = pd.read_json("trinity://staging/orders_copy", typ="series", storage_options=options)
    assert json.loads(sample.cat("/staging/orders_copy"))["definition"] == dict(again["definition"])


def test_listing_as_a_dataframe(sample):
    frame = pd.DataFrame(sample.ls("/sales"))
    assert list(frame["kind"]) == ["view", "table"]


def test_missing_file(sample):
    with pytest.raises(FileNotFoundError):
        pd.read_json("trinity://sales/nope", typ="series", storage_options={"root": sample.root})
