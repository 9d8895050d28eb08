"""`info` and `open(..., "rb")` of a table or view give the file `cat` gives, from the
catalog's rendering cached by definition location, and the definition's id remembered
by location: warm, neither decodes the definition to JSON again (issue 13: a warm
`open().read()` was 6x fsspec's local one, rendering JSON from protobuf each time).

`test_a_warm_info_or_open_renders_nothing` fails on the code before (every info and
open rendered the definition again); the others guard what the cache must not change.
"""

from __future__ import annotations

import json

from google.protobuf import json_format

from trinityfs.fs import TrinityFileSystem


def _count_renders(monkeypatch) -> list[int]:
    renders: list[int] = []
    real = json_format.MessageToDict

    def counted(*args, **kwargs):
        renders.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(json_format, "MessageToDict", counted)
    return renders


def test_a_warm_info_or_open_renders_nothing(sample: TrinityFileSystem, monkeypatch):
    for path in ("/sales/orders", "/sales/big_orders"):
        sample.cat(path)  # warm: rendered once
    renders = _count_renders(monkeypatch)
    for _ in range(3):
        for path in ("/sales/orders", "/sales/big_orders", "/v/3/sales/orders"):
            sample.info(path)
            with sample.open(path, "rb") as f:
                f.read()
    assert renders == []


def test_info_and_open_give_what_cat_gives(sample: TrinityFileSystem, lake):
    for path, kind, ns, name in (
        ("/sales/orders", "table", "sales", "orders"),
        ("/sales/big_orders", "view", "sales", "big_orders"),
    ):
        data = sample.cat(path)
        info = sample.info(path)
        assert info["size"] == len(data) and info["kind"] == kind and info["type"] == "file"
        described = lake.describe_table(ns, name) if kind == "table" else None
        if described is not None:
            assert info["id"] == described.id
        assert info["id"] == json.loads(data)["definition"]["id"]
        with sample.open(path, "rb") as f:
            assert f.read() == data


def test_a_replaced_definition_shows_its_new_id_and_size(sample: TrinityFileSystem, lake):
    """The id is remembered by definition location: a replaced definition is a new
    file, so a warm filesystem shows the new one's id and size at once."""
    before = sample.info("/sales/orders")
    lake.drop_table("sales", "orders")
    lake.create_table("sales", "orders", {"properties": {"owner": "someone-else-entirely"}})
    after = sample.info("/sales/orders")
    assert after["id"] != before["id"]
    assert after["size"] == len(sample.cat("/sales/orders")) != before["size"]
    old = sample.info(f"/v/{before['version']}/sales/orders")
    assert old["id"] == before["id"] and old["size"] == before["size"]
