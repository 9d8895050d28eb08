from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IsolationLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNAPSHOT: _ClassVar[IsolationLevel]
    SERIALIZABLE: _ClassVar[IsolationLevel]

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BOOLEAN: _ClassVar[DataType]
    INT2: _ClassVar[DataType]
    INT4: _ClassVar[DataType]
    INT8: _ClassVar[DataType]
    DECIMAL: _ClassVar[DataType]
    FLOAT4: _ClassVar[DataType]
    FLOAT8: _ClassVar[DataType]
    CHAR: _ClassVar[DataType]
    VARCHAR: _ClassVar[DataType]
    DATE: _ClassVar[DataType]
    TIME3: _ClassVar[DataType]
    TIME6: _ClassVar[DataType]
    TIME9: _ClassVar[DataType]
    TIMETZ3: _ClassVar[DataType]
    TIMETZ6: _ClassVar[DataType]
    TIMETZ9: _ClassVar[DataType]
    TIMESTAMP3: _ClassVar[DataType]
    TIMESTAMP6: _ClassVar[DataType]
    TIMESTAMP9: _ClassVar[DataType]
    TIMESTAMPTZ3: _ClassVar[DataType]
    TIMESTAMPTZ6: _ClassVar[DataType]
    TIMESTAMPTZ9: _ClassVar[DataType]
    FIXED: _ClassVar[DataType]
    BINARY: _ClassVar[DataType]
    STRUCT: _ClassVar[DataType]
    MAP: _ClassVar[DataType]
    LIST: _ClassVar[DataType]
SNAPSHOT: IsolationLevel
SERIALIZABLE: IsolationLevel
BOOLEAN: DataType
INT2: DataType
INT4: DataType
INT8: DataType
DECIMAL: DataType
FLOAT4: DataType
FLOAT8: DataType
CHAR: DataType
VARCHAR: DataType
DATE: DataType
TIME3: DataType
TIME6: DataType
TIME9: DataType
TIMETZ3: DataType
TIMETZ6: DataType
TIMETZ9: DataType
TIMESTAMP3: DataType
TIMESTAMP6: DataType
TIMESTAMP9: DataType
TIMESTAMPTZ3: DataType
TIMESTAMPTZ6: DataType
TIMESTAMPTZ9: DataType
FIXED: DataType
BINARY: DataType
STRUCT: DataType
MAP: DataType
LIST: DataType

class LakehouseDef(_message.Message):
    __slots__ = ("id", "major_version", "order", "namespace_name_max_size_bytes", "table_name_max_size_bytes", "view_name_max_size_bytes", "node_file_max_size_bytes", "properties", "txn_ttl_millis", "txn_isolation_level", "exported_snapshots")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class ExportedSnapshotsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    MAJOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    VIEW_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    NODE_FILE_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    TXN_TTL_MILLIS_FIELD_NUMBER: _ClassVar[int]
    TXN_ISOLATION_LEVEL_FIELD_NUMBER: _ClassVar[int]
    EXPORTED_SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    major_version: int
    order: int
    namespace_name_max_size_bytes: int
    table_name_max_size_bytes: int
    view_name_max_size_bytes: int
    node_file_max_size_bytes: int
    properties: _containers.ScalarMap[str, str]
    txn_ttl_millis: int
    txn_isolation_level: IsolationLevel
    exported_snapshots: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., major_version: _Optional[int] = ..., order: _Optional[int] = ..., namespace_name_max_size_bytes: _Optional[int] = ..., table_name_max_size_bytes: _Optional[int] = ..., view_name_max_size_bytes: _Optional[int] = ..., node_file_max_size_bytes: _Optional[int] = ..., properties: _Optional[_Mapping[str, str]] = ..., txn_ttl_millis: _Optional[int] = ..., txn_isolation_level: _Optional[_Union[IsolationLevel, str]] = ..., exported_snapshots: _Optional[_Mapping[str, str]] = ...) -> None: ...

class NamespaceDef(_message.Message):
    __slots__ = ("id", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    properties: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class TableDef(_message.Message):
    __slots__ = ("id", "schema", "distribution_keys", "primary_keys", "sort_keys", "unique_columns", "table_type", "table_format", "format_properties", "properties")
    class FormatPropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_KEYS_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_KEYS_FIELD_NUMBER: _ClassVar[int]
    SORT_KEYS_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    TABLE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TABLE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    schema: Schema
    distribution_keys: _containers.RepeatedScalarFieldContainer[int]
    primary_keys: _containers.RepeatedScalarFieldContainer[int]
    sort_keys: _containers.RepeatedScalarFieldContainer[int]
    unique_columns: _containers.RepeatedScalarFieldContainer[int]
    table_type: str
    table_format: str
    format_properties: _containers.ScalarMap[str, str]
    properties: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., schema: _Optional[_Union[Schema, _Mapping]] = ..., distribution_keys: _Optional[_Iterable[int]] = ..., primary_keys: _Optional[_Iterable[int]] = ..., sort_keys: _Optional[_Iterable[int]] = ..., unique_columns: _Optional[_Iterable[int]] = ..., table_type: _Optional[str] = ..., table_format: _Optional[str] = ..., format_properties: _Optional[_Mapping[str, str]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ViewDef(_message.Message):
    __slots__ = ("id", "schema_binding", "schema", "substrait_read_rel", "referenced_object_full_names", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_BINDING_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    SUBSTRAIT_READ_REL_FIELD_NUMBER: _ClassVar[int]
    REFERENCED_OBJECT_FULL_NAMES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    schema_binding: bool
    schema: Schema
    substrait_read_rel: bytes
    referenced_object_full_names: _containers.RepeatedCompositeFieldContainer[FullName]
    properties: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., schema_binding: _Optional[bool] = ..., schema: _Optional[_Union[Schema, _Mapping]] = ..., substrait_read_rel: _Optional[bytes] = ..., referenced_object_full_names: _Optional[_Iterable[_Union[FullName, _Mapping]]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class TransactionDef(_message.Message):
    __slots__ = ("id", "isolation_level", "beginning_root_node_file_path", "running_root_node_file_path", "began_at_millis", "expire_at_millis")
    ID_FIELD_NUMBER: _ClassVar[int]
    ISOLATION_LEVEL_FIELD_NUMBER: _ClassVar[int]
    BEGINNING_ROOT_NODE_FILE_PATH_FIELD_NUMBER: _ClassVar[int]
    RUNNING_ROOT_NODE_FILE_PATH_FIELD_NUMBER: _ClassVar[int]
    BEGAN_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    id: str
    isolation_level: IsolationLevel
    beginning_root_node_file_path: str
    running_root_node_file_path: str
    began_at_millis: int
    expire_at_millis: int
    def __init__(self, id: _Optional[str] = ..., isolation_level: _Optional[_Union[IsolationLevel, str]] = ..., beginning_root_node_file_path: _Optional[str] = ..., running_root_node_file_path: _Optional[str] = ..., began_at_millis: _Optional[int] = ..., expire_at_millis: _Optional[int] = ...) -> None: ...

class FullName(_message.Message):
    __slots__ = ("namespace_name", "name")
    NAMESPACE_NAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    namespace_name: str
    name: str
    def __init__(self, namespace_name: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class Schema(_message.Message):
    __slots__ = ("columns",)
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    columns: _containers.RepeatedCompositeFieldContainer[Column]
    def __init__(self, columns: _Optional[_Iterable[_Union[Column, _Mapping]]] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("id", "name", "type", "nullable", "properties", "struct_fields", "map_key", "map_value", "list_element")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    STRUCT_FIELDS_FIELD_NUMBER: _ClassVar[int]
    MAP_KEY_FIELD_NUMBER: _ClassVar[int]
    MAP_VALUE_FIELD_NUMBER: _ClassVar[int]
    LIST_ELEMENT_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    type: DataType
    nullable: bool
    properties: _containers.ScalarMap[str, str]
    struct_fields: _containers.RepeatedCompositeFieldContainer[Column]
    map_key: Column
    map_value: Column
    list_element: Column
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., type: _Optional[_Union[DataType, str]] = ..., nullable: _Optional[bool] = ..., properties: _Optional[_Mapping[str, str]] = ..., struct_fields: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., map_key: _Optional[_Union[Column, _Mapping]] = ..., map_value: _Optional[_Union[Column, _Mapping]] = ..., list_element: _Optional[_Union[Column, _Mapping]] = ...) -> None: ...
