"""Issue 13: a conflict message showed the raw key, padded with ~94 spaces. It now names
the object as users do (table 'ns.t'); the raw key stays on the exception's `key`."""

from __future__ import annotations

import re

import pytest

from trinityfs.errors import CommitConflictError


def test_table_write_conflict_names_the_table(lake) -> None:
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    t1 = lake.transaction()
    t1.replace_table("ns", "t", {"properties": {"a": "1"}})
    lake.replace_table("ns", "t", {"properties": {"b": "1"}})
    with pytest.raises(CommitConflictError) as info:
        t1.commit()
    assert "table 'ns.t' was changed by version 3" in str(info.value)
    assert not re.search(r"\s{2,}", str(info.value))
    assert info.value.key.startswith("C===ns")


def test_drop_conflict_names_the_namespace(lake) -> None:
    lake.create_namespace("ns")
    t1 = lake.transaction()
    t1.create_table("ns", "t")
    lake.drop_namespace("ns")
    with pytest.raises(CommitConflictError) as info:
        t1.commit()
    assert "namespace 'ns' was dropped by version 2" in str(info.value)
    assert not re.search(r"\s{2,}", str(info.value))
