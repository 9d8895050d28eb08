"""File content of the trinity:// filesystem: a definition as stable, readable JSON.

A table or view file reads as

    {
      "definition": {...the proto3 JSON mapping of its TableDef or ViewDef...},
      "kind": "table"
    }

indented by two spaces, keys sorted, UTF-8, with a trailing newline, so equal definitions
always give equal bytes. Fields at their default value are included (so every field is
visible and editable), message fields that are unset are absent.

Writing accepts exactly that shape (`definition` may be left out for an empty one), or
nothing at all (an empty or all-whitespace write creates or replaces the object with an
empty definition of its current kind, a table for a new object). Anything else raises a
ValueError that names the problem; parsing happens before anything is committed.
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from trinityfs.catalog.model import OBJECT_KINDS
from trinityfs.catalog.writer import as_definition
from trinityfs.errors import InvalidArgumentError

FILE_KINDS = OBJECT_KINDS  # ("table", "view"): namespaces are directories
ENVELOPE_KEYS = ("definition", "kind")


class ContentError(ValueError):
    """The bytes written to a file are not a definition; the message says why."""

    errno = errno.EINVAL  # for front ends that turn errors into errno values


@dataclass(frozen=True)
class Content:
    """A parsed write: `kind` and `definition` are None for an empty write."""

    kind: str | None
    definition: dict[str, Any] | None

    @property
    def empty(self) -> bool:
        return self.kind is None


def definition_dict(msg: Message) -> dict[str, Any]:
    """The proto3 JSON mapping of a definition, every field included, proto field names."""
    return json_format.MessageToDict(
        msg,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def dumps(value: Any) -> bytes:
    """Stable JSON bytes: two-space indent, sorted keys, UTF-8, trailing newline."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def render(kind: str, msg: Message) -> bytes:
    """The file content of a table or view definition."""
    return dumps({"kind": kind, "definition": definition_dict(msg)})


def parse(data: bytes | bytearray | memoryview | str, path: str = "") -> Content:
    """Parse written bytes; ContentError (a ValueError) names what is wrong."""
    where = f"{path}: " if path else ""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContentError(f"{where}not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        return Content(None, None)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContentError(
            f"{where}not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
            'expected {"kind": "table" or "view", "definition": {...}}'
        ) from None
    if not isinstance(value, dict):
        raise ContentError(
            f'{where}the JSON must be an object with "kind" and "definition", '
            f"not {_json_type(value)}"
        )
    unknown = sorted(set(value) - set(ENVELOPE_KEYS))
    if unknown:
        raise ContentError(
            f"{where}unknown key(s) {', '.join(map(repr, unknown))}; a definition file "
            'has only "kind" and "definition"'
        )
    if "kind" not in value:
        raise ContentError(f'{where}missing "kind" ("table" or "view")')
    kind = value["kind"]
    if kind == "namespace":
        raise ContentError(
            f'{where}"kind" is "namespace", but namespaces are directories: mkdir one, '
            "and write tables and views as files inside it"
        )
    if kind not in FILE_KINDS:
        raise ContentError(f'{where}"kind" must be "table" or "view", not {kind!r}')
    definition = value.get("definition", {})
    if definition is None:
        definition = {}
    if not isinstance(definition, dict):
        raise ContentError(
            f'{where}"definition" must be a JSON object, not {_json_type(definition)}'
        )
    to_message(kind, definition, path)  # validate now, before anything is committed
    return Content(kind, definition)


def to_message(kind: str, definition: dict[str, Any] | None, path: str = "") -> Message:
    """The protobuf definition of a parsed write (empty when `definition` is None)."""
    try:
        return as_definition(kind, definition)
    except InvalidArgumentError as exc:
        where = f"{path}: " if path else ""
        raise ContentError(f"{where}{exc}") from None


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


__all__ = ["Content", "ContentError", "definition_dict", "dumps", "parse", "render", "to_message"]
