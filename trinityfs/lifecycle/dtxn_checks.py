"""Checks of a distributed transaction's stored state before it is trusted
(`trinityfs.lifecycle.dtxn.load`): a transaction file can be rewritten, and its running
root replaced, by anyone who can write the lakehouse, and a newer trinityfs may have
saved what this one cannot honour. Each check names what it refuses."""

from __future__ import annotations

from google.protobuf import unknown_fields

from trinityfs.errors import CorruptFileError, InvalidArgumentError, UnsupportedFormatVersionError
from trinityfs.format.definitions import FIXED_LAKEHOUSE_FIELDS
from trinityfs.format.keys import KeyCodec
from trinityfs.format.paths import (
    EXPORTS_DIR,
    LATEST_HINT,
    OLDEST_VERSION,
    definition_owner_problem,
    optimized_path,
    parse_root_node_file,
)
from trinityfs.format.trinitylake_pb2 import IsolationLevel, LakehouseDef, TransactionDef


def check_known(tdef: TransactionDef, location: str) -> None:
    """UnsupportedFormatVersionError for a transaction this trinityfs cannot honour: one
    with fields (its checksum verified) or an isolation level it does not know, saved by
    a newer trinityfs whose meaning for them it would silently drop."""
    unknown = unknown_fields.UnknownFieldSet(tdef)
    if len(unknown):
        numbers = sorted({field.field_number for field in unknown})
        raise UnsupportedFormatVersionError(
            f"distributed transaction {tdef.id!r} ({location}) has fields {numbers} that "
            "this trinityfs does not know (saved by a newer one?); load it with that one"
        )
    if tdef.isolation_level not in IsolationLevel.values():
        raise UnsupportedFormatVersionError(
            f"distributed transaction {tdef.id!r} ({location}) has isolation level "
            f"{tdef.isolation_level}, which this trinityfs does not know (saved by a newer "
            "one?); load it with that one"
        )


def same_lakehouse(ldef: LakehouseDef, base: LakehouseDef, running: str) -> LakehouseDef:
    """`ldef`, when it keeps every field fixed at the lakehouse's creation."""
    for field in FIXED_LAKEHOUSE_FIELDS:
        old, new = getattr(base, field), getattr(ldef, field)
        if old != new:
            raise CorruptFileError(
                running,
                f"the staged lakehouse definition changes {field} from {old!r} to "
                f"{str(new)[:80]!r}, which cannot change after creation",
            )
    return ldef


def special_file(location: str, *, node_ok: bool = False) -> str | None:
    """What `location` is when the format (FORMAT.md section 1) gives its name another
    meaning than an object definition, else None. A staged definition naming one would
    land a version pointing at a file that is overwritten, deleted or of another type
    (the transaction's own file is deleted by the commit)."""
    if parse_root_node_file(location) is not None:
        return "a root node file"
    if location == LATEST_HINT:
        return "the latest-version hint"
    if location == OLDEST_VERSION:
        return "the oldest-version marker"
    if location.startswith("_lakehouse_def_"):
        return "a lakehouse definition"
    if location.startswith(("_export_", EXPORTS_DIR + "/")):
        return "an export"
    name = location.rpartition("/")[2]
    if name.startswith("."):
        return "a hidden or temporary file"
    stem = name.partition("-")[2]
    if stem.startswith("txn-") and location == optimized_path(stem):
        return "a distributed transaction file"
    if not node_ok and name.endswith(".arrow"):
        return "a node file"
    return None


def staged_definition_problem(key: str, location: str, codec: KeyCodec) -> str | None:
    """Why (a predicate: "is ...") `location` cannot be what a transaction stages for
    object key `key`: a file
    the format gives another meaning (`special_file`), or (FORMAT.md names definition
    files after their object) another object's definition file; None when it can."""
    special = special_file(location)
    if special is not None:
        return f"is {special}"
    try:
        obj = codec.decode(key)
    except InvalidArgumentError as exc:
        return f"is staged for {key.rstrip()[:80]!r}, which is no object key ({exc})"
    return definition_owner_problem(location, obj.kind, obj.namespace, obj.name)
