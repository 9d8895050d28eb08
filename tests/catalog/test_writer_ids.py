"""Ids of created definitions (trinityfs/catalog/writer.py `new_id`): random version 4
UUIDs in their canonical text, as str(uuid.uuid4()) gives them."""

from __future__ import annotations

import uuid

from trinityfs.catalog.writer import new_id


def test_new_ids_are_canonical_random_uuids():
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        value = uuid.UUID(text)
        assert str(value) == text
        assert value.version == 4 and value.variant == uuid.RFC_4122


def test_a_created_table_gets_a_new_id(tmp_path):
    from trinityfs import Lakehouse

    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    table_id = lake.describe_table("ns", "t").id
    assert str(uuid.UUID(table_id)) == table_id and uuid.UUID(table_id).version == 4
