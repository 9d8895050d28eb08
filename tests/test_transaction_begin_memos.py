"""What a transaction's beginning remembers from the one before (issue 13, commit CPU):
the lakehouse definition a RootStore read last (each caller still gets a copy of its
own) and the KeyCodec of a set of name size limits."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import LakehouseDef, new_lakehouse_def
from trinityfs.format.keys import KeyCodec
from trinityfs.txn import transaction as transaction_module


class _Counting:
    """Counts the storage operations a RootStore's storage is asked for."""

    def __init__(self, storage):
        self._storage = storage
        self.calls: list[str] = []

    def __getattr__(self, name):
        attr = getattr(self._storage, name)
        if callable(attr):

            def counted(*args, **kwargs):
                self.calls.append(name)
                return attr(*args, **kwargs)

            return counted
        return attr


def test_the_same_definition_is_read_from_storage_once(lake):
    roots = lake.engine.roots
    root = roots.load(lake.latest_version())
    counting = _Counting(roots.storage)
    roots.storage = counting
    first_location, first = roots.lakehouse_def(root)
    second_location, second = roots.lakehouse_def(root)
    assert first_location == second_location
    assert first == second
    # the old code asked storage (its read cache) at every transaction's beginning
    assert counting.calls.count("read_immutable") <= 1


def test_every_caller_gets_a_copy_of_its_own(lake):
    roots = lake.engine.roots
    root = roots.load(lake.latest_version())
    _, first = roots.lakehouse_def(root)
    first.order = 3
    first.properties["node-file.compression"] = "lz4"
    _, second = roots.lakehouse_def(root)
    _, third = roots.lakehouse_def(root)
    assert second.order == 128 and third.order == 128
    assert second.properties["node-file.compression"] == "zstd"
    assert second is not third and second is not first
    second.order = 5
    assert third.order == 128


def test_a_new_definition_is_read_and_remembered(lake):
    lake.create_namespace("ns")
    before = lake.engine.snapshot()
    with lake.transaction() as txn:
        ldef = LakehouseDef()
        ldef.CopyFrom(txn.lakehouse_def)
        ldef.properties["team"] = "blue"
        txn.set_lakehouse_def(ldef)
    after = lake.engine.snapshot()
    assert after.lakehouse_def.properties["team"] == "blue"
    assert after.lakehouse_def_location != before.lakehouse_def_location
    # the older version's definition is read again, not the remembered newer one
    older = lake.engine.snapshot(before.version)
    assert "team" not in older.lakehouse_def.properties
    assert lake.engine.snapshot().lakehouse_def.properties["team"] == "blue"


def test_codecs_are_shared_by_limits_and_equal_to_a_new_one():
    seen = {}
    for limits in [(100, 100, 100), (10, 200, 30), (10, 200, 31), (100, 100, 100)]:
        ldef = new_lakehouse_def(id="codec-test")
        (
            ldef.namespace_name_max_size_bytes,
            ldef.table_name_max_size_bytes,
            ldef.view_name_max_size_bytes,
        ) = limits
        codec = transaction_module._codec_of(ldef)
        assert codec == KeyCodec.from_lakehouse_def(ldef)
        assert (codec.namespace_max, codec.table_max, codec.view_max) == limits
        assert seen.setdefault(limits, codec) is codec


def test_refused_limits_still_raise():
    ldef = new_lakehouse_def(id="codec-refused")
    ldef.table_name_max_size_bytes = 0
    for _ in range(2):  # never remembered
        with pytest.raises(InvalidArgumentError, match="table name max size"):
            transaction_module._codec_of(ldef)


def test_a_conflict_names_the_object_with_its_lakehouses_limits(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    first = lake.transaction()
    second = lake.transaction()
    first.create_table("ns", "t", {"table_format": "ICEBERG"})
    second.create_table("ns", "t", {"table_format": "ICEBERG"})
    first.commit()
    with pytest.raises(Exception, match=r"table 'ns\.t'"):
        second.commit()
