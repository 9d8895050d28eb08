from __future__ import annotations

import uuid

import pytest

from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    UnsupportedFormatVersionError,
)
from trinityfs.format.definitions import (
    MAX_NEW_ORDER,
    Column,
    DataType,
    FullName,
    IsolationLevel,
    LakehouseDef,
    NamespaceDef,
    Schema,
    TableDef,
    TransactionDef,
    ViewDef,
    buffer_budget_bytes,
    decode_definition,
    definition_from_json_dict,
    definition_to_json_dict,
    encode_definition,
    message_size,
    new_lakehouse_def,
    validate_lakehouse_def,
)


def test_field_numbers_match_format_section_2():
    assert [(f.name, f.number) for f in LakehouseDef.DESCRIPTOR.fields] == [
        ("id", 1),
        ("major_version", 2),
        ("order", 3),
        ("namespace_name_max_size_bytes", 4),
        ("table_name_max_size_bytes", 5),
        ("view_name_max_size_bytes", 6),
        ("node_file_max_size_bytes", 7),
        ("properties", 8),
        ("txn_ttl_millis", 9),
        ("txn_isolation_level", 10),
        ("exported_snapshots", 11),
    ]
    fd = LakehouseDef.DESCRIPTOR.fields_by_name
    assert fd["order"].type == fd["order"].TYPE_UINT32
    assert fd["node_file_max_size_bytes"].type == fd["order"].TYPE_UINT64
    assert fd["txn_ttl_millis"].type == fd["order"].TYPE_UINT64
    assert [(f.name, f.number) for f in NamespaceDef.DESCRIPTOR.fields] == [
        ("id", 1),
        ("properties", 2),
    ]
    assert [(f.name, f.number) for f in TableDef.DESCRIPTOR.fields] == [
        ("id", 1),
        ("schema", 2),
        ("distribution_keys", 3),
        ("primary_keys", 4),
        ("sort_keys", 5),
        ("unique_columns", 6),
        ("table_type", 7),
        ("table_format", 8),
        ("format_properties", 9),
        ("properties", 10),
    ]
    assert [(f.name, f.number) for f in ViewDef.DESCRIPTOR.fields] == [
        ("id", 1),
        ("schema_binding", 2),
        ("schema", 3),
        ("substrait_read_rel", 4),
        ("referenced_object_full_names", 5),
        ("properties", 6),
    ]
    assert [(f.name, f.number) for f in TransactionDef.DESCRIPTOR.fields] == [
        ("id", 1),
        ("isolation_level", 2),
        ("beginning_root_node_file_path", 3),
        ("running_root_node_file_path", 4),
        ("began_at_millis", 5),
        ("expire_at_millis", 6),
    ]
    assert [(f.name, f.number) for f in FullName.DESCRIPTOR.fields] == [
        ("namespace_name", 1),
        ("name", 2),
    ]
    assert [(f.name, f.number) for f in Schema.DESCRIPTOR.fields] == [("columns", 1)]
    assert [(f.name, f.number) for f in Column.DESCRIPTOR.fields] == [
        ("id", 1),
        ("name", 2),
        ("type", 3),
        ("nullable", 4),
        ("properties", 5),
        ("struct_fields", 6),
        ("map_key", 7),
        ("map_value", 8),
        ("list_element", 9),
    ]
    assert dict(IsolationLevel.items()) == {"SNAPSHOT": 0, "SERIALIZABLE": 1}
    names = [
        *("BOOLEAN", "INT2", "INT4", "INT8", "DECIMAL", "FLOAT4", "FLOAT8", "CHAR", "VARCHAR"),
        *("DATE", "TIME3", "TIME6", "TIME9", "TIMETZ3", "TIMETZ6", "TIMETZ9"),
        *("TIMESTAMP3", "TIMESTAMP6", "TIMESTAMP9", "TIMESTAMPTZ3", "TIMESTAMPTZ6", "TIMESTAMPTZ9"),
        *("FIXED", "BINARY", "STRUCT", "MAP", "LIST"),
    ]
    assert list(DataType.keys()) == names
    assert list(DataType.values()) == list(range(27))


def test_repeated_column_ids_are_uint32():
    for name in ("distribution_keys", "primary_keys", "sort_keys", "unique_columns"):
        field = TableDef.DESCRIPTOR.fields_by_name[name]
        assert field.type == field.TYPE_UINT32
        assert field.is_repeated


def test_new_lakehouse_def_defaults():
    ldef = new_lakehouse_def()
    assert uuid.UUID(ldef.id).version == 4
    assert ldef.major_version == 0
    assert ldef.order == 128
    assert ldef.namespace_name_max_size_bytes == 100
    assert ldef.table_name_max_size_bytes == 100
    assert ldef.view_name_max_size_bytes == 100
    assert ldef.node_file_max_size_bytes == 1048576
    assert ldef.txn_ttl_millis == 259200000
    assert ldef.txn_isolation_level == IsolationLevel.Value("SNAPSHOT")
    assert dict(ldef.properties) == {} and dict(ldef.exported_snapshots) == {}
    assert new_lakehouse_def().id != ldef.id


def test_new_lakehouse_def_overrides():
    ldef = new_lakehouse_def(
        order=4,
        node_file_max_size_bytes=10_000,
        txn_isolation_level="SERIALIZABLE",
        properties={"version.min-versions-to-keep": "5", "owner": "me"},
        exported_snapshots={"snap": "_export_snap.arrow"},
        id="fixed",
    )
    assert ldef.order == 4 and ldef.node_file_max_size_bytes == 10_000
    assert ldef.txn_isolation_level == IsolationLevel.Value("SERIALIZABLE")
    assert dict(ldef.properties)["owner"] == "me"
    assert ldef.exported_snapshots["snap"] == "_export_snap.arrow"
    assert ldef.id == "fixed"
    assert new_lakehouse_def(txn_isolation_level=1).txn_isolation_level == 1
    assert new_lakehouse_def(txn_isolation_level="snapshot").txn_isolation_level == 0


@pytest.mark.parametrize(
    ("options", "error", "fragment"),
    [
        ({"bogus": 1}, InvalidArgumentError, "unknown lakehouse option 'bogus'"),
        ({"order": 2}, InvalidArgumentError, "order 2"),
        ({"order": -1}, InvalidArgumentError, "order=-1 is outside 0..4294967295"),
        ({"order": 4097}, InvalidArgumentError, "order 4097 is above 4096"),
        ({"order": "128"}, InvalidArgumentError, "order"),
        ({"order": True}, InvalidArgumentError, "order"),
        ({"order": 2**32}, InvalidArgumentError, "order=4294967296 is outside 0..4294967295"),
        ({"txn_ttl_millis": -1}, InvalidArgumentError, "txn_ttl_millis=-1 is outside 0..1844"),
        ({"node_file_max_size_bytes": 2**64}, InvalidArgumentError, "outside 0..1844"),
        ({"major_version": 1}, UnsupportedFormatVersionError, "version 1"),
        ({"namespace_name_max_size_bytes": 0}, InvalidArgumentError, "1..10000"),
        ({"view_name_max_size_bytes": 10001}, InvalidArgumentError, "1..10000"),
        ({"node_file_max_size_bytes": 51712}, InvalidArgumentError, "key table estimate 51712"),
        ({"txn_isolation_level": "READ_COMMITTED"}, InvalidArgumentError, "isolation"),
        ({"txn_isolation_level": 7}, InvalidArgumentError, "isolation"),
        ({"properties": {"a": 1}}, InvalidArgumentError, "properties"),
        ({"properties": ["a"]}, InvalidArgumentError, "properties"),
        ({"properties": {"version.max-age-millis": "soon"}}, InvalidArgumentError, "max-age"),
        ({"properties": {"version.min-versions-to-keep": "0"}}, InvalidArgumentError, ">= 1"),
        ({"exported_snapshots": {"e": "../x"}}, InvalidArgumentError, "export 'e'"),
        ({"exported_snapshots": {"": "_export_.arrow"}}, InvalidArgumentError, "empty name"),
        ({"id": ""}, InvalidArgumentError, "no id"),
        ({"id": 5}, InvalidArgumentError, "id"),
    ],
)
def test_new_lakehouse_def_rejects(options, error, fragment):
    with pytest.raises(error) as info:
        new_lakehouse_def(**options)
    assert fragment in str(info.value)


def test_node_size_must_exceed_key_table_estimate():
    estimate = 4 * (10 + 20 + 200 + 4)
    ldef = new_lakehouse_def(
        order=4,
        namespace_name_max_size_bytes=10,
        table_name_max_size_bytes=20,
        node_file_max_size_bytes=estimate + 1,
    )
    assert buffer_budget_bytes(ldef) == 1
    ldef.node_file_max_size_bytes = estimate
    with pytest.raises(InvalidArgumentError, match="must exceed the key table estimate"):
        validate_lakehouse_def(ldef)


def test_the_largest_new_order_is_created():
    ldef = new_lakehouse_def(order=MAX_NEW_ORDER, node_file_max_size_bytes=MAX_NEW_ORDER * 404 + 1)
    assert ldef.order == MAX_NEW_ORDER
    # a lakehouse another implementation created with a larger order is still readable
    ldef.order = MAX_NEW_ORDER * 2
    ldef.node_file_max_size_bytes = ldef.order * 404 + 1
    assert validate_lakehouse_def(ldef) is ldef


def test_validate_reads_foreign_defs():
    ldef = new_lakehouse_def()
    ldef.major_version = 3
    with pytest.raises(UnsupportedFormatVersionError):
        validate_lakehouse_def(ldef)
    empty = LakehouseDef()
    with pytest.raises(InvalidArgumentError, match="no id"):
        validate_lakehouse_def(empty)
    empty.id = "x"
    with pytest.raises(InvalidArgumentError, match="order 0"):
        validate_lakehouse_def(empty)
    with pytest.raises(InvalidArgumentError):
        validate_lakehouse_def(NamespaceDef())


def test_buffer_budget_and_message_size():
    ldef = new_lakehouse_def()
    assert buffer_budget_bytes(ldef) == 1048576 - 128 * (100 + 100 + 200 + 4)
    assert message_size("abc", "xy", 17) == 3 + 2 + 2 + 12
    assert message_size("abc", None, 7) == 3 + 1 + 12
    assert message_size("日", "é", 0) == 3 + 2 + 1 + 12


def _table_def() -> TableDef:
    column = Column(id=1, name="c", type=DataType.Value("LIST"), nullable=True)
    column.list_element.CopyFrom(Column(id=2, name="e", type=DataType.Value("INT8")))
    column.properties["k"] = "v"
    return TableDef(
        id="t",
        schema=Schema(columns=[column]),
        primary_keys=[1],
        table_type="MANAGED",
        table_format="ICEBERG",
        format_properties={"metadata_location": "s3://x/m.json", "b": "2", "a": "1"},
    )


@pytest.mark.parametrize(
    "msg",
    [
        new_lakehouse_def(properties={"b": "2", "a": "1"}),
        NamespaceDef(id="n", properties={"z": "1", "a": "2"}),
        _table_def(),
        ViewDef(
            id="v",
            schema_binding=True,
            substrait_read_rel=b"\x00\x01",
            referenced_object_full_names=[FullName(namespace_name="ns", name="t")],
        ),
        TransactionDef(id="x", isolation_level=1, began_at_millis=1, expire_at_millis=2**63),
    ],
)
def test_binary_and_json_round_trips(msg):
    data = encode_definition(msg)
    assert decode_definition(data, type(msg), "p") == msg
    assert encode_definition(type(msg).FromString(data)) == data  # deterministic
    as_json = definition_to_json_dict(msg)
    assert definition_from_json_dict(as_json, type(msg)) == msg


def test_json_uses_proto_field_names_and_shows_defaults():
    as_json = definition_to_json_dict(new_lakehouse_def(id="x"))
    assert as_json["major_version"] == 0
    assert as_json["txn_isolation_level"] == "SNAPSHOT"
    assert as_json["namespace_name_max_size_bytes"] == 100


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"bogus": 1}, "bogus"),
        ({"order": "many"}, "order"),
        ({"txn_isolation_level": "NOPE"}, "NOPE"),
        ([], "must be an object"),
    ],
)
def test_json_errors_name_the_problem(data, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        definition_from_json_dict(data, LakehouseDef)
    assert fragment in str(info.value)


@pytest.mark.parametrize("data", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xff\xfe", b"\x08"])
def test_decode_definition_corrupt(data):
    with pytest.raises(CorruptFileError) as info:
        decode_definition(data, LakehouseDef, "defs/x.binpb")
    assert info.value.path == "defs/x.binpb"
    assert "LakehouseDef" in str(info.value)


def test_encode_definition_rejects_non_messages():
    with pytest.raises(InvalidArgumentError):
        encode_definition(b"x")
