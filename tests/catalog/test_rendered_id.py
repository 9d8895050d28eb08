"""rendered_id reads a definition's id back from its rendered file (what trinity:// info
reports beside the cached rendering, instead of decoding the definition or keeping a
second cache by location)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinityfs.catalog.content import render, rendered_id
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.trinitylake_pb2 import TableDef, ViewDef

# any valid text (protobuf strings are UTF-8: no lone surrogates), the tricky bits often
texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(['"', "\\", "\n", ","]),
    max_size=12,
)
TRAPS = ['\n    "id": "trap",', '"id": "x"', "id"]


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(["table", "view"]),
    ident=texts | st.sampled_from(["", "0f0e9a5c-3b7a-4c1e-9d2b-1a2b3c4d5e6f", *TRAPS]),
    props=st.dictionaries(texts | st.sampled_from(TRAPS), texts | st.sampled_from(TRAPS)),
)
def test_rendered_id_is_the_definitions_id(kind, ident, props):
    msg = TableDef(id=ident) if kind == "table" else ViewDef(id=ident)
    msg.properties.update(props)
    if kind == "table":
        msg.table_format = '"id": "no"'
    assert rendered_id(render(kind, msg)) == ident


def test_not_a_rendered_definition():
    with pytest.raises(InvalidArgumentError, match="no id line"):
        rendered_id(b'{\n  "kind": "table"\n}\n')


def test_fs_info_reports_the_id_without_decoding_the_definition(tmp_path, monkeypatch):
    from trinityfs import Lakehouse
    from trinityfs.catalog.reader import CatalogReader
    from trinityfs.fs.spec import TrinityFileSystem

    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    lake.create_view("ns", "v", {"properties": {"id": "not the id"}})
    fs = TrinityFileSystem(str(tmp_path / "lake"), skip_instance_cache=True)
    assert fs.info("ns/t")["id"] == lake.describe_table("ns", "t").id
    assert fs.info("ns/v")["id"] == lake.describe_view("ns", "v").id
    decoded = []
    real = CatalogReader.read_definition
    monkeypatch.setattr(CatalogReader, "read_definition", lambda *a: decoded.append(a) or real(*a))
    with fs.open("ns/t", "rb") as f:
        assert f.read() == fs.cat("ns/t")
    assert fs.info("ns/t")["id"] == lake.describe_table("ns", "t").id
    assert decoded == []  # the rendering was cached: the id comes from its bytes
