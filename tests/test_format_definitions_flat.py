"""Flat JSON definitions (string fields, string maps) are set without json_format.ParseDict
(trinityfs/format/definitions.py `_flat_definition`): the same message as ParseDict gives,
and every other input still goes through ParseDict and its errors."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from trinityfs.errors import DefinitionLimitError, InvalidArgumentError
from trinityfs.format import definitions
from trinityfs.format.definitions import definition_from_json_dict
from trinityfs.format.trinitylake_pb2 import LakehouseDef, NamespaceDef, TableDef, ViewDef

CLASSES = [NamespaceDef, TableDef, ViewDef, LakehouseDef]
texts = st.text(max_size=20)  # includes lone surrogates: the message refuses those


@st.composite
def flat_dicts(draw):
    cls = draw(st.sampled_from(CLASSES))
    d = {}
    for fd in cls.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        if fd.type == fd.TYPE_STRING and not fd.is_repeated:
            d[fd.name] = draw(st.one_of(texts, st.integers(), st.none()))
        elif fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            d[fd.name] = draw(st.dictionaries(texts, st.one_of(texts, st.integers()), max_size=4))
        else:
            d[fd.name] = draw(st.sampled_from([1, "x", [], {}]))
    if draw(st.booleans()):
        d[draw(st.sampled_from(["tableFormat", "unknown", "formatProperties"]))] = "v"
    return cls, d


def _parse_dict(d, cls):
    try:
        return json_format.ParseDict(d, cls())
    except json_format.ParseError:
        return "error"


@settings(max_examples=500, deadline=None)
@given(case=flat_dicts())
def test_the_same_message_or_the_same_refusal_as_parse_dict(case):
    cls, d = case
    expected = _parse_dict(d, cls)
    try:
        got = definition_from_json_dict(d, cls)
    except InvalidArgumentError:
        got = "error"
    assert got == expected
    if got != "error":
        assert got.SerializeToString(deterministic=True) == expected.SerializeToString(
            deterministic=True
        )


def test_a_flat_definition_is_set_without_parse_dict(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("ParseDict was used")

    monkeypatch.setattr(json_format, "ParseDict", refuse)
    msg = definition_from_json_dict(
        {"table_format": "ICEBERG", "properties": {"a": "b"}, "id": "x"}, TableDef
    )
    assert msg == TableDef(table_format="ICEBERG", properties={"a": "b"}, id="x")
    assert definition_from_json_dict({"properties": {}}, NamespaceDef) == NamespaceDef()


@pytest.mark.parametrize(
    "d",
    [
        {"table_format": "\ud800"},
        {"properties": {"k": 1}},
        {"tableFormat": 3},
        {"schema": {"columns": [{"name": "c", "type": "NOPE"}]}},
        {"nope": "x"},
    ],
)
def test_other_shapes_get_parse_dicts_errors(d):
    with pytest.raises(InvalidArgumentError, match="invalid TableDef JSON"):
        definition_from_json_dict(d, TableDef)


def test_a_flat_definition_over_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(definitions, "MAX_DEFINITION_BYTES", 100)
    with pytest.raises(DefinitionLimitError, match="bytes encoded"):
        definition_from_json_dict({"properties": {"k": "v" * 200}}, NamespaceDef)
