"""Definitions as files: the stable JSON a table or view reads as, and parsing it back.

A table or view renders as

    {
      "definition": {...the proto3 JSON mapping of its TableDef or ViewDef...},
      "kind": "table"
    }

indented by two spaces, keys sorted, UTF-8, with a trailing newline, so equal definitions
always give equal bytes. Fields at their default value are included (so every field is
visible and editable), message fields that are unset are absent.

Parsing accepts exactly that shape (`definition` may be left out for an empty one), or
nothing at all (an empty or all-whitespace text: `Content.empty`, which a front end turns
into "an empty definition of the current kind"). Anything else raises ContentError (an
InvalidArgumentError, so a ValueError, with errno EINVAL) naming the problem, before
anything is committed.

`RenderCache` keeps rendered bytes by definition file: a definition location is written
once and never changes, so its rendering never goes stale.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from trinityfs import jsontext
from trinityfs.catalog.model import OBJECT_KINDS
from trinityfs.catalog.writer import as_definition
from trinityfs.errors import ContentError, InvalidArgumentError, JsonTooDeepError
from trinityfs.format.definitions import MAX_DEFINITION_JSON_DEPTH
from trinityfs.lru import LRU

FILE_KINDS = OBJECT_KINDS  # ("table", "view"): namespaces are directories
ENVELOPE_KEYS = ("definition", "kind")
RENDER_CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Content:
    """A parsed definition file: `kind` and `definition` are None for an empty one."""

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


#: the line of a rendered file holding the definition's own id: `dumps` indents the
#: definition's fields by 4 spaces (nested fields deeper) and always renders `id`
MAX_CONTENT_JSON_DEPTH = 2 * MAX_DEFINITION_JSON_DEPTH
"""Nesting a definition file's JSON may use before parsing: room for the envelope and for
format.definitions to refuse a definition too deep with its own message."""

_ID_LINE = b'\n    "id": "'


def rendered_id(data: bytes) -> str:
    """The id of the definition a file rendered by `render` holds, read from its bytes
    (a front end's `info` reports it beside the cached file: no decode, no second cache
    by location). A JSON string never holds a raw newline, so the line is structural."""
    start = data.find(_ID_LINE)
    if start < 0:
        raise InvalidArgumentError("not a rendered table or view definition: no id line")
    start += len(_ID_LINE) - 1  # the opening quote
    token = data[start : data.find(b"\n", start)].removesuffix(b",")
    if b"\\" in token:  # escapes: let the JSON parser undo them
        return json.loads(token)
    return token[1:-1].decode("utf-8")


def parse(data: bytes | bytearray | memoryview | str, path: str = "") -> Content:
    """Parse a definition file; ContentError names what is wrong (`path` prefixes it)."""
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
        value = jsontext.loads(text, max_depth=MAX_CONTENT_JSON_DEPTH)
    except json.JSONDecodeError as exc:
        raise ContentError(
            f"{where}not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
            'expected {"kind": "table" or "view", "definition": {...}}'
        ) from None
    except JsonTooDeepError as exc:
        raise ContentError(f"{where}{exc}") from None
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
    """The protobuf definition of a parsed file (empty when `definition` is None)."""
    try:
        return as_definition(kind, definition)  # type: ignore[arg-type]
    except ContentError:
        raise
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


class RenderCache:
    """Rendered definition files by (storage, kind, location), bounded in bytes.

    Safe because a definition location names one immutable file: it is written once,
    never overwritten, so the bytes rendered from it never change.
    """

    def __init__(self, max_bytes: int = RENDER_CACHE_BYTES):
        self._lru: LRU[tuple[str, str, str], bytes] = LRU(max_bytes, weigh=len)
        self.renders = 0  # how many times a definition was actually rendered

    def get(self, storage: str, kind: str, location: str, load: Callable[[], Message]) -> bytes:
        """The rendering of the definition at `location`, loading it only on a miss."""
        key = (storage, kind, location)
        hit = self._lru.get(key)
        if hit is not None:
            return hit
        data = render(kind, load())
        self.renders += 1
        self._lru.put(key, data)
        return data

    def clear(self) -> None:
        self._lru.clear()


__all__ = [
    "FILE_KINDS",
    "Content",
    "ContentError",
    "RenderCache",
    "definition_dict",
    "dumps",
    "parse",
    "render",
    "rendered_id",
    "to_message",
]
