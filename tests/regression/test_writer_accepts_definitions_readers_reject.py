"""Issue 10 case 10: the writer accepted definitions that no reader could read.

At 937923f a table definition nested ~100 levels committed and then was unreadable
(protobuf's decode depth), breaking listings and fsck of the whole catalog; 100,000-deep
JSON gave a bare RecursionError; a 100 MB definition was accepted. Now the writer refuses
them with DefinitionLimitError (an InvalidArgumentError) stating the limits.
"""

from __future__ import annotations

import json

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import TableDef
from trinityfs.fs.content import ContentError, parse

# The documented limits (docs/FORMAT-CHOICES.md, "Definition limits").
MAX_DEFINITION_DEPTH = 64
MAX_DEFINITION_BYTES = 8 * 2**20


def _is_limit_error(exc: BaseException) -> bool:
    return isinstance(exc, InvalidArgumentError) and type(exc).__name__ == "DefinitionLimitError"


def _nested_columns(levels: int) -> dict:
    column: dict = {"id": 1, "name": "leaf", "type": "INT4"}
    for _ in range(levels):
        column = {"id": 1, "name": "s", "type": "STRUCT", "struct_fields": [column]}
    return {"schema": {"columns": [column]}}


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    return lake


def test_deep_definition_is_refused_before_commit(lake):
    before = lake.latest_version()
    with pytest.raises(InvalidArgumentError) as err:
        lake.create_table("ns", "deep", _nested_columns(100))
    assert _is_limit_error(err.value)
    assert str(MAX_DEFINITION_DEPTH) in str(err.value)
    assert lake.latest_version() == before
    assert lake.list_tables("ns") == []
    assert lake.fsck().ok


def test_deep_definition_message_is_refused(lake):
    msg = TableDef(id="x")
    column = msg.schema.columns.add(name="c")
    for _ in range(120):
        column = column.struct_fields.add(name="c")
    with pytest.raises(InvalidArgumentError) as err:
        lake.create_table("ns", "deep", msg)
    assert _is_limit_error(err.value)


def test_deepest_allowed_definition_reads_back(lake):
    # levels: TableDef 1, Schema 2, top column 3, each nested column +1
    lake.create_table("ns", "ok", _nested_columns(MAX_DEFINITION_DEPTH - 3))
    assert lake.describe_table("ns", "ok").schema.columns[0].name == "s"
    assert lake.fsck().ok


def test_very_deep_json_is_a_clear_error_not_recursion_error(lake):
    text = '{"kind": "table", "definition": ' + '{"a": [' * 100_000 + "]}" * 100_000 + "}"
    with pytest.raises(ContentError) as err:
        parse(text, "/ns/t")
    assert "deep" in str(err.value)
    deep: dict = {}
    for _ in range(10_000):
        deep = {"properties": deep}
    with pytest.raises(InvalidArgumentError) as err:
        lake.create_table("ns", "t", deep)
    assert _is_limit_error(err.value)


def test_oversized_definition_is_refused(lake):
    big = {"properties": {"blob": "x" * (MAX_DEFINITION_BYTES + 1)}}
    with pytest.raises(InvalidArgumentError) as err:
        lake.create_table("ns", "big", big)
    assert _is_limit_error(err.value)
    assert str(MAX_DEFINITION_BYTES) in str(err.value)
    assert lake.list_tables("ns") == []
    assert json.dumps(lake.fsck().to_dict())  # still a healthy, checkable catalog
