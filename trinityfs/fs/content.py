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
import re
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


_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_NUMBER_PREFIX = re.compile(r"-?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]*)?")
_NUMBER_CHARS = frozenset("+-.eE0123456789")
_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")
_LITERALS = ("true", "false", "null")


def _scan_string(text: str, i: int) -> int | None:
    """Index after the JSON string starting at text[i] ('"'); -1 if it is invalid, None
    if the text ends inside it (validly so far)."""
    n = len(text)
    i += 1
    while i < n:
        c = text[i]
        if c == '"':
            return i + 1
        if c < " ":
            return -1
        if c == "\\":
            if i + 1 >= n:
                return None
            e = text[i + 1]
            if e not in _ESCAPES:
                return -1
            if e == "u":
                digits = text[i + 2 : i + 6]
                if any(d not in _HEX for d in digits):
                    return -1
                if len(digits) < 4:
                    return None
                i += 6
                continue
            i += 2
            continue
        i += 1
    return None


def could_become_valid(data: bytes | bytearray | memoryview) -> bool:
    """False when no continuation of `data` can be a definition file: it is not UTF-8,
    not the start of one JSON object, or goes on after the object ended.

    Lets a streaming writer (a FUSE write, `echo garbage > file`) be refused at the
    write itself, where the error reaches the program, instead of only at close.
    """
    raw = bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end < len(raw) or "unexpected end" not in exc.reason:
            return False
        text = raw[: exc.start].decode("utf-8")
    stack: list[str] = []
    state = "top"  # top, value, value_or_end, key, key_or_end, colon, comma_or_end, done
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if state == "done":
            return False
        if state == "colon":
            if c != ":":
                return False
            state, i = "value", i + 1
            continue
        if state == "comma_or_end":
            if c == ",":
                state = "key" if stack[-1] == "{" else "value"
            elif c == {"{": "}", "[": "]"}[stack[-1]]:
                stack.pop()
                state = "comma_or_end" if stack else "done"
            else:
                return False
            i += 1
            continue
        if state in ("key", "key_or_end"):
            if c == "}" and state == "key_or_end":
                stack.pop()
                state = "comma_or_end" if stack else "done"
                i += 1
                continue
            if c != '"':
                return False
            end = _scan_string(text, i)
            if end is None:
                return True
            if end < 0:
                return False
            state, i = "colon", end
            continue
        # a value is expected (the top level must be an object)
        if c == "]" and state == "value_or_end":
            stack.pop()
            state = "comma_or_end" if stack else "done"
            i += 1
            continue
        if state == "top" and c != "{":
            return False
        if c in "{[":
            stack.append(c)
            state, i = ("key_or_end" if c == "{" else "value_or_end"), i + 1
            continue
        if c == '"':
            end = _scan_string(text, i)
            if end is None:
                return True
            if end < 0:
                return False
            i = end
        elif c in _NUMBER_CHARS:
            j = i
            while j < n and text[j] in _NUMBER_CHARS:
                j += 1
            token = text[i:j]
            if j == n:
                return _NUMBER_PREFIX.fullmatch(token) is not None
            if _NUMBER.fullmatch(token) is None:
                return False
            i = j
        else:
            word = next((w for w in _LITERALS if text.startswith(w[: n - i], i)), None)
            if word is None:
                return False
            if i + len(word) > n:
                return True
            i += len(word)
        state = "comma_or_end"
    return True


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


__all__ = [
    "Content",
    "ContentError",
    "could_become_valid",
    "definition_dict",
    "dumps",
    "parse",
    "render",
    "to_message",
]
