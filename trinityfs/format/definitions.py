"""Object definition files: protobuf messages of proto/trinitylake.proto (FORMAT.md §2).

A definition file is the deterministic serialization of one message, nothing around it.
Also holds the LakehouseDef defaults and checks, and the tree's size arithmetic.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from trinityfs.errors import (
    CorruptFileError,
    DefinitionLimitError,
    InvalidArgumentError,
    UnsafeLocationError,
    UnsupportedFormatVersionError,
)
from trinityfs.format import trinitylake_pb2
from trinityfs.format.integrity import verify_named_content
from trinityfs.format.paths import definition_kind_problem, validate_location
from trinityfs.lru import LRU

LakehouseDef = trinitylake_pb2.LakehouseDef
NamespaceDef = trinitylake_pb2.NamespaceDef
TableDef = trinitylake_pb2.TableDef
ViewDef = trinitylake_pb2.ViewDef
TransactionDef = trinitylake_pb2.TransactionDef
FullName = trinitylake_pb2.FullName
Schema = trinitylake_pb2.Schema
Column = trinitylake_pb2.Column
DataType = trinitylake_pb2.DataType
IsolationLevel = trinitylake_pb2.IsolationLevel

M = TypeVar("M", bound=Message)

SUPPORTED_MAJOR_VERSION = 0
MIN_ORDER = 3
# Writer-side cap for new lakehouses (FORMAT-CHOICES "Largest order"): every node file holds a
# key table of `order` rows, ~order * 404 bytes with default name sizes, so order 4096 is ~1.7 MB.
MAX_NEW_ORDER = 4096
MAX_NAME_MAX_SIZE_BYTES = 10000
# Per-row allowance FORMAT.md's key table estimate adds to the two name maxes: 200 for
# the value location and 4 for the encoded type id.
KEY_TABLE_ROW_EXTRA_BYTES = 200 + 4
# Fixed per-message overhead used by message_size (Arrow offsets and validity bits).
MESSAGE_ROW_OVERHEAD_BYTES = 12

PROP_VERSION_MAX_AGE_MILLIS = "version.max-age-millis"
PROP_VERSION_MIN_TO_KEEP = "version.min-versions-to-keep"
DEFAULT_VERSION_MAX_AGE_MILLIS = 604800000
DEFAULT_VERSION_MIN_TO_KEEP = 3
# Body compression of the node files writers create ("none" when absent): a per-lakehouse
# choice so that lakehouses shared with readers lacking an Arrow codec can stay plain.
PROP_NODE_FILE_COMPRESSION = "node-file.compression"
NODE_FILE_COMPRESSIONS = ("none", "zstd", "lz4")
# What a lakehouse definition fixes at its creation: a new LakehouseDef keeps them.
FIXED_LAKEHOUSE_FIELDS = (
    "id",
    "major_version",
    "order",
    "namespace_name_max_size_bytes",
    "table_name_max_size_bytes",
    "view_name_max_size_bytes",
)

LAKEHOUSE_DEFAULTS: dict[str, Any] = {
    "major_version": 0,
    "order": 128,
    "namespace_name_max_size_bytes": 100,
    "table_name_max_size_bytes": 100,
    "view_name_max_size_bytes": 100,
    "node_file_max_size_bytes": 1048576,
    "txn_ttl_millis": 259200000,
    "txn_isolation_level": IsolationLevel.Value("SNAPSHOT"),
}
_MAP_FIELDS = ("properties", "exported_snapshots")


# What every reader can read: protobuf decoders refuse messages nested 100 deep (upb's
# default), so writers stay well below; the size bounds memory per definition.
MAX_DEFINITION_DEPTH = 64
MAX_DEFINITION_BYTES = 8 * 2**20
# A message level is one JSON object plus, for repeated fields, one array.
MAX_DEFINITION_JSON_DEPTH = 2 * MAX_DEFINITION_DEPTH + 2
LIMITS_TEXT = (
    f"definitions may nest messages at most {MAX_DEFINITION_DEPTH} levels deep (a map "
    f"entry counts as a level; a table's top-level column is level 3) and may be at most "
    f"{MAX_DEFINITION_BYTES} bytes encoded"
)


def definition_depth(msg: Message, stop_above: int = MAX_DEFINITION_DEPTH) -> int:
    """Nesting depth of `msg` in messages (itself = 1, map entries count), computed
    without recursion; stops early once it exceeds `stop_above`."""
    deepest = 1
    stack: list[tuple[Message, int]] = [(msg, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > stop_above:
            return deepest
        for fd, value in current.ListFields():
            if fd.message_type is None:
                continue
            if fd.message_type.GetOptions().map_entry:
                deepest = max(deepest, depth + 1)
                if fd.message_type.fields_by_name["value"].message_type is not None:
                    stack.extend((v, depth + 2) for v in value.values())
            elif fd.is_repeated:
                stack.extend((v, depth + 1) for v in value)
            else:
                stack.append((value, depth + 1))
    return deepest


def _check_depth(msg: Message) -> None:
    if definition_depth(msg) > MAX_DEFINITION_DEPTH:
        raise DefinitionLimitError(
            f"{msg.DESCRIPTOR.name} is nested more than {MAX_DEFINITION_DEPTH} messages "
            f"deep; {LIMITS_TEXT}"
        )


def _check_size(msg: Message, size: int) -> None:
    if size > MAX_DEFINITION_BYTES:
        raise DefinitionLimitError(
            f"{msg.DESCRIPTOR.name} is {size} bytes encoded, more than the "
            f"{MAX_DEFINITION_BYTES} bytes (8 MiB) a definition may have"
        )


def check_definition_limits(msg: Message) -> None:
    """Refuse a definition a reader could not read: DefinitionLimitError naming the limit."""
    _check_depth(msg)
    _check_size(msg, msg.ByteSize())


def json_depth(value: Any, stop_above: int = MAX_DEFINITION_JSON_DEPTH) -> int:
    """Nesting depth of dicts and lists in a JSON-style value, without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list | tuple):
            children = current
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > stop_above:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def encode_definition(msg: Message) -> bytes:
    """Serialize deterministically (map entries sorted): equal definitions, equal bytes.

    Refuses (DefinitionLimitError) what readers could not read; see LIMITS_TEXT.
    """
    if not isinstance(msg, Message):
        raise InvalidArgumentError(f"expected a protobuf message, got {type(msg).__name__}")
    _check_depth(msg)  # before serializing: a message too deep may not even serialize
    data = msg.SerializeToString(deterministic=True)
    _check_size(msg, len(data))
    return data


def decode_definition(data: bytes, cls: type[M], path: str) -> M:
    """Parse a definition file of message type `cls`; CorruptFileError naming `path` on failure.

    The bytes are verified against the content hash in the file name when it has one.
    An empty file is corrupt: trinityfs never writes one (every definition has an id),
    and protobuf would read it as an empty definition.
    """
    data = bytes(data)
    problem = definition_kind_problem(path, cls.DESCRIPTOR.name)
    if problem is not None:
        raise CorruptFileError(path, problem)
    try:
        verify_named_content(path, data)
    except CorruptFileError as exc:
        raise CorruptFileError(path, f"{cls.DESCRIPTOR.name} file: {exc.problem}") from None
    if not data:
        raise CorruptFileError(path, f"the file is empty (0 bytes), not a {cls.DESCRIPTOR.name}")
    try:
        return cls.FromString(data)
    except (DecodeError, ValueError, TypeError, RecursionError) as exc:
        raise CorruptFileError(
            path, f"not a valid {cls.DESCRIPTOR.name} protobuf message ({exc})"
        ) from None


# Lakehouse definitions already decoded and validated, by (location, bytes): every
# transaction begins by reading its lakehouse's definition, an immutable file. The key
# holds the bytes themselves, so only the very bytes that passed the checks skip them.
_CHECKED_LAKEHOUSE_DEFS: LRU[tuple[str, bytes], LakehouseDef] = LRU(16)


def known_lakehouse_def(path: str, data: bytes) -> LakehouseDef | None:
    """A fresh copy of the LakehouseDef `remember_lakehouse_def` kept for exactly these
    bytes at `path` (decoded and validated then), or None: decode and validate them."""
    if type(data) is not bytes:
        return None
    kept = _CHECKED_LAKEHOUSE_DEFS.get((path, data))
    if kept is None:
        return None
    copy = LakehouseDef()
    copy.CopyFrom(kept)  # callers may change what they get
    return copy


def remember_lakehouse_def(path: str, data: bytes, ldef: LakehouseDef) -> None:
    """Keep `ldef`, decoded from `data` by `decode_definition` and accepted by
    `validate_lakehouse_def`, for `known_lakehouse_def` (a copy: `ldef` stays the
    caller's)."""
    kept = LakehouseDef()
    kept.CopyFrom(ldef)
    _CHECKED_LAKEHOUSE_DEFS.put((path, bytes(data)), kept)


#: the way out, said with every refused stored definition (trinityfs/lifecycle/defrepair.py)
_REPAIR = (
    " (if this is the latest definition, a rollback to a version whose definition"
    " passes repairs the lakehouse)"
)
_REPAIR_DROPPING = (
    " (if this is the latest definition, a rollback to a version whose definition"
    " passes, with --drop-refused-exports, repairs the lakehouse and drops the refused"
    " export records)"
)


def decode_lakehouse_def(data: bytes, path: str) -> LakehouseDef:
    """A stored LakehouseDef, decoded and validated (a copy the caller may change).

    A definition read from storage that `validate_lakehouse_def` refuses is a lie about
    the lakehouse: CorruptFileError naming `path` (UnsupportedFormatVersionError stays
    itself: a newer format, not damage). Checked bytes are remembered by location."""
    known = known_lakehouse_def(path, data)
    if known is not None:
        return known
    ldef = decode_definition(data, LakehouseDef, path)
    try:
        validate_lakehouse_def(ldef)
    except InvalidArgumentError as exc:
        repair = _REPAIR_DROPPING if refused_exports(ldef) else _REPAIR
        raise CorruptFileError(path, f"lakehouse definition: {exc}{repair}") from None
    remember_lakehouse_def(path, data, ldef)
    return ldef


def refused_exports(ldef: LakehouseDef) -> dict[str, str]:
    """The export entries of `ldef` the checks refuse: name -> why (an empty name, an
    unsafe location). Such a record can never be read through trinityfs."""
    refused: dict[str, str] = {}
    for name, location in ldef.exported_snapshots.items():
        if not name:
            refused[name] = "an entry with an empty name"
            continue
        try:
            validate_location(location)
        except UnsafeLocationError as exc:
            refused[name] = exc.problem
    return refused


def parse_isolation_level(value: str | int) -> int:
    """IsolationLevel from its name (any case) or enum number."""
    if isinstance(value, str):
        try:
            return IsolationLevel.Value(value.upper())
        except ValueError:
            pass
    elif (
        isinstance(value, int) and not isinstance(value, bool) and value in IsolationLevel.values()
    ):
        return value
    raise InvalidArgumentError(
        f"unknown isolation level {value!r}; expected one of {list(IsolationLevel.keys())}"
    )


def _set_string_map(ldef: LakehouseDef, name: str, value: Any) -> None:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidArgumentError(f"lakehouse option {name} must be a dict of str to str")
    target = getattr(ldef, name)
    target.clear()
    target.update(value)


_UNSIGNED_BITS = {FieldDescriptor.TYPE_UINT32: 32, FieldDescriptor.TYPE_UINT64: 64}
_SIGNED_BITS = {FieldDescriptor.TYPE_INT32: 32, FieldDescriptor.TYPE_INT64: 64}


def _check_field_range(name: str, value: int | str) -> None:
    """Refuse an integer option its protobuf field cannot hold, in the option's own words."""
    if not isinstance(value, int):
        return
    field_type = LakehouseDef.DESCRIPTOR.fields_by_name[name].type
    if field_type in _UNSIGNED_BITS:
        low, high = 0, 2 ** _UNSIGNED_BITS[field_type] - 1
    elif field_type in _SIGNED_BITS:
        bits = _SIGNED_BITS[field_type]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    else:
        return
    if not low <= value <= high:
        raise InvalidArgumentError(f"lakehouse option {name}={value} is outside {low}..{high}")


def new_lakehouse_def(**options: Any) -> LakehouseDef:
    """A validated LakehouseDef with FORMAT.md defaults and a fresh uuid4 id.

    Options are LakehouseDef field names; txn_isolation_level also takes
    "SNAPSHOT"/"SERIALIZABLE"; properties and exported_snapshots take dicts.
    """
    ldef = LakehouseDef(id=str(uuid.uuid4()), **LAKEHOUSE_DEFAULTS)
    fields = LakehouseDef.DESCRIPTOR.fields_by_name
    for name, value in options.items():
        if name not in fields:
            raise InvalidArgumentError(
                f"unknown lakehouse option {name!r}; expected one of {sorted(fields)}"
            )
        if name in _MAP_FIELDS:
            _set_string_map(ldef, name, value)
        elif name == "txn_isolation_level":
            ldef.txn_isolation_level = parse_isolation_level(value)
        else:
            expected = str if name == "id" else int
            if isinstance(value, bool) or not isinstance(value, expected):
                raise InvalidArgumentError(
                    f"lakehouse option {name} must be {expected.__name__}, got {value!r}"
                )
            _check_field_range(name, value)
            try:
                setattr(ldef, name, value)
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(f"lakehouse option {name}={value!r}: {exc}") from None
    if ldef.order > MAX_NEW_ORDER:
        raise InvalidArgumentError(
            f"tree order {ldef.order} is above {MAX_NEW_ORDER}, the largest this implementation "
            f"creates (each node file holds a key table of {ldef.order} rows)"
        )
    validate_lakehouse_def(ldef)
    return ldef


def key_table_estimate_bytes(ldef: LakehouseDef) -> int:
    """FORMAT.md's key table size estimate: N * (namespace max + table max + 200 + 4)."""
    return ldef.order * (
        ldef.namespace_name_max_size_bytes
        + ldef.table_name_max_size_bytes
        + KEY_TABLE_ROW_EXTRA_BYTES
    )


def buffer_budget_bytes(ldef: LakehouseDef) -> int:
    """Bytes of a node file left for its write buffer: node size minus the key table estimate."""
    return ldef.node_file_max_size_bytes - key_table_estimate_bytes(ldef)


def node_file_compression(ldef: LakehouseDef) -> str | None:
    """The Arrow IPC compression writers use for this lakehouse's node files (None: plain)."""
    value = ldef.properties.get(PROP_NODE_FILE_COMPRESSION, "none")
    return None if value == "none" else value


def message_size(key: str, value: str | None, txn: int) -> int:
    """Estimated bytes one buffer message adds to a node file (the tree's flush accounting)."""
    size = len(key.encode("utf-8")) + len(str(txn)) + MESSAGE_ROW_OVERHEAD_BYTES
    if value is not None:
        size += len(value.encode("utf-8"))
    return size


def _check_int_property(ldef: LakehouseDef, name: str, minimum: int) -> None:
    text = ldef.properties.get(name)
    if text is None:
        return
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
        raise InvalidArgumentError(
            f"lakehouse property {name}={text!r} must be a decimal integer >= {minimum}"
        )


def validate_lakehouse_def(ldef: LakehouseDef) -> LakehouseDef:
    """Check a LakehouseDef can be used; returns it unchanged.

    Raises UnsupportedFormatVersionError for an unknown major version,
    else InvalidArgumentError (also for an export at an unsafe location: the definition
    is what is wrong; a caller that read it from a file names that file).
    """
    if not isinstance(ldef, LakehouseDef):
        raise InvalidArgumentError(f"expected a LakehouseDef, got {type(ldef).__name__}")
    if ldef.major_version != SUPPORTED_MAJOR_VERSION:
        raise UnsupportedFormatVersionError(
            f"lakehouse major format version {ldef.major_version} is not supported "
            f"(this implementation knows version {SUPPORTED_MAJOR_VERSION})"
        )
    if not ldef.id:
        raise InvalidArgumentError("lakehouse definition has no id")
    if ldef.order < MIN_ORDER:
        raise InvalidArgumentError(f"tree order {ldef.order} is below the minimum {MIN_ORDER}")
    for name in (
        "namespace_name_max_size_bytes",
        "table_name_max_size_bytes",
        "view_name_max_size_bytes",
    ):
        value = getattr(ldef, name)
        if not 1 <= value <= MAX_NAME_MAX_SIZE_BYTES:
            raise InvalidArgumentError(f"{name}={value} is outside 1..{MAX_NAME_MAX_SIZE_BYTES}")
    estimate = key_table_estimate_bytes(ldef)
    if ldef.node_file_max_size_bytes <= estimate:
        raise InvalidArgumentError(
            f"node_file_max_size_bytes={ldef.node_file_max_size_bytes} must exceed the key "
            f"table estimate {estimate} = order {ldef.order} * (namespace max "
            f"{ldef.namespace_name_max_size_bytes} + table max "
            f"{ldef.table_name_max_size_bytes} + 200 + 4), leaving room for the write buffer"
        )
    if ldef.txn_isolation_level not in IsolationLevel.values():
        raise InvalidArgumentError(
            f"unknown txn_isolation_level {ldef.txn_isolation_level}; "
            f"expected one of {list(IsolationLevel.keys())}"
        )
    _check_int_property(ldef, PROP_VERSION_MAX_AGE_MILLIS, 0)
    _check_int_property(ldef, PROP_VERSION_MIN_TO_KEEP, 1)
    compression = ldef.properties.get(PROP_NODE_FILE_COMPRESSION, "none")
    if compression not in NODE_FILE_COMPRESSIONS:
        raise InvalidArgumentError(
            f"lakehouse property {PROP_NODE_FILE_COMPRESSION}={compression!r} must be one of "
            f"{NODE_FILE_COMPRESSIONS}"
        )
    for export_name, location in ldef.exported_snapshots.items():
        if not export_name:
            raise InvalidArgumentError("exported_snapshots has an entry with an empty name")
        try:
            validate_location(location)
        except UnsafeLocationError as exc:  # the definition is refused, not a file it names
            raise InvalidArgumentError(f"export {export_name!r}: {exc.problem}") from None
    return ldef


def definition_to_json_dict(msg: Message) -> dict[str, Any]:
    """The proto3 JSON mapping of a definition, with field names as in the .proto and
    fields at their default value included (so order 0 is visible, not silently absent)."""
    if not isinstance(msg, Message):
        raise InvalidArgumentError(f"expected a protobuf message, got {type(msg).__name__}")
    return json_format.MessageToDict(
        msg,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def definition_from_json_dict(d: dict[str, Any], cls: type[M]) -> M:
    """Parse the proto3 JSON mapping of a definition; InvalidArgumentError names the problem."""
    if not isinstance(d, dict):
        raise InvalidArgumentError(
            f"a {cls.DESCRIPTOR.name} in JSON must be an object, got {type(d).__name__}"
        )
    msg = _flat_definition(d, cls)
    if msg is not None:
        return msg
    if json_depth(d) > MAX_DEFINITION_JSON_DEPTH:
        raise DefinitionLimitError(
            f"{cls.DESCRIPTOR.name} JSON is nested more than {MAX_DEFINITION_JSON_DEPTH} "
            f"objects and arrays deep; {LIMITS_TEXT}"
        )
    try:
        msg = json_format.ParseDict(d, cls())
    except json_format.ParseError as exc:
        raise InvalidArgumentError(f"invalid {cls.DESCRIPTOR.name} JSON: {exc}") from None
    except RecursionError:
        raise DefinitionLimitError(
            f"{cls.DESCRIPTOR.name} JSON is nested too deeply; {LIMITS_TEXT}"
        ) from None
    check_definition_limits(msg)
    return msg


# -- the common shapes without json_format ------------------------------------------------
#
# Most definitions written through the catalog are flat: string fields and string maps
# ({"table_format": "ICEBERG"}, {"properties": {...}}). json_format.ParseDict walks its
# generic converters for those (~15-40 us a create); a flat dict is set directly instead.
# Only exact proto field names with str values (and str -> str dicts for string maps) take
# this path; anything else, and anything the message itself refuses (a lone surrogate),
# goes through ParseDict, which accepts the same inputs and names every problem.

_STRING, _STRING_MAP = 1, 2
_FLAT_FIELDS: dict[str, dict[str, int]] = {}


def _flat_fields(cls: type[Message]) -> dict[str, int]:
    """Field name -> _STRING or _STRING_MAP for the fields of `cls` that take a flat value."""
    descriptor = cls.DESCRIPTOR
    fields = _FLAT_FIELDS.get(descriptor.full_name)
    if fields is None:
        fields = {}
        for fd in descriptor.fields:
            if fd.type == FieldDescriptor.TYPE_STRING and not fd.is_repeated:
                fields[fd.name] = _STRING
            elif fd.message_type is not None and fd.message_type.GetOptions().map_entry:
                key, value = (fd.message_type.fields_by_name[n] for n in ("key", "value"))
                if key.type == value.type == FieldDescriptor.TYPE_STRING:
                    fields[fd.name] = _STRING_MAP
        _FLAT_FIELDS[descriptor.full_name] = fields
    return fields


def _flat_definition(d: dict[str, Any], cls: type[M]) -> M | None:
    """`d` as a `cls` when it is flat (see above), checked like ParseDict's result; None
    for any other dict."""
    fields = _flat_fields(cls)
    for name, value in d.items():
        kind = fields.get(name)
        if kind == _STRING:
            if type(value) is not str:
                return None
        elif kind == _STRING_MAP:
            if type(value) is not dict or not all(
                type(k) is str and type(v) is str for k, v in value.items()
            ):
                return None
        else:
            return None
    try:
        msg = cls(**d)
    except (TypeError, ValueError):  # e.g. a lone surrogate: ParseDict says it precisely
        return None
    _check_size(msg, msg.ByteSize())  # flat: two levels deep at most
    return msg
