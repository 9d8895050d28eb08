"""Definition files as JSON (render, parse) and the render cache by location."""

from __future__ import annotations

import json

import pytest

from trinityfs.catalog import ContentError, ObjectRef
from trinityfs.catalog.content import parse, render, to_message
from trinityfs.errors import InvalidArgumentError


def test_render_parse_round_trip(lake):
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"properties": {"k": "v"}})
    msg = lake.describe_table("ns", "t")
    data = render("table", msg)
    assert data.endswith(b"\n") and json.loads(data)["kind"] == "table"
    parsed = parse(data)
    assert to_message(parsed.kind, parsed.definition) == msg
    assert parse(b"  \n").empty


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xff", "not UTF-8"),
        (b"{", "not valid JSON"),
        (b"[]", "must be an object"),
        (b'{"kind": "table", "x": 1}', "unknown key"),
        (b'{"definition": {}}', 'missing "kind"'),
        (b'{"kind": "namespace"}', "directories"),
        (b'{"kind": "table", "definition": {"nope": 1}}', "TableDef"),
        (b"[" * 100000 + b"]" * 100000, "JSON"),
    ],
)
def test_bad_content_is_a_typed_einval_error(data, message):
    with pytest.raises(ContentError, match=message) as e:
        parse(data, "/ns/t")
    assert isinstance(e.value, InvalidArgumentError) and e.value.errno == 22


def test_fs_content_is_a_thin_alias_of_the_catalog_module():
    from trinityfs.catalog import content
    from trinityfs.fs import content as fs_content

    assert fs_content.render is content.render and fs_content.parse is content.parse
    assert fs_content.ContentError is content.ContentError


def test_rendered_json_is_cached_by_definition_location(lake):
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"properties": {"k": "v"}})
    snap = lake.snapshot()
    ref = ObjectRef("ns", "t", "table")
    location = snap.object_location("table", "ns", "t")
    first = lake.render_definition(snap, ref, location)
    reads = []
    real = snap._read_file
    snap._read_file = lambda loc: reads.append(loc) or real(loc)
    for _ in range(3):
        assert lake.render_definition(snap, ref, location) == first
    assert reads == [] and lake._renders.renders == 1
    lake.replace_table("ns", "t", {"properties": {"k": "w"}})  # a new file, a new entry
    snap2 = lake.snapshot()
    second = lake.render_definition(snap2, ref, snap2.object_location("table", "ns", "t"))
    assert second != first and b'"w"' in second and lake._renders.renders == 2
    assert [r for r, _ in lake.iter_definitions(snap2, "ns")] == [ref]
