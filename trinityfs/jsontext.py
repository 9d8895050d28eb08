"""JSON from outside (request bodies, options, files, stored rows) parsed with a bound on
nesting, measured before parsing: the parser recurses once per level, and a hostile text
nesting thousands of arrays would otherwise reach the interpreter's recursion limit, where
anything that runs at that depth (a finalizer the GC picks) fails too. One rule for every
reader, usable from any layer like `errors`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trinityfs.errors import JsonTooDeepError

DEFAULT_MAX_DEPTH = 64
"""Levels of arrays and objects inside each other that JSON from outside may use by
default: more than REST bodies, options and stored rows need, far below the recursion
limit. Definition files pass their own, larger limit (catalog/content.py)."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


def nests_deeper_than(text: str | bytes | bytearray, limit: int) -> bool:
    """Whether JSON `text` opens more than `limit` arrays or objects inside each other,
    told without parsing it (brackets inside strings do not count). Bytes are read in the
    encoding json.loads would detect (UTF-8, -16 or -32): in UTF-16 a character such as
    U+4E22 has a quote byte, so measuring the raw bytes could miss the brackets."""
    if not isinstance(text, str):
        text = _decoded(_bytes_of(text))
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for bracket in _NOT_A_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False


def _bytes_of(text: object) -> bytes:
    """The bytes of a bytes-like JSON text; TypeError, as json.loads raises, for anything
    else (`bytes()` would turn an int into that many zero bytes, a list into its items)."""
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text)
    raise TypeError(f"the JSON object must be str, bytes or bytearray, not {type(text).__name__}")


def _decoded(data: bytes) -> str:
    """`data` as json.loads decodes it; bytes it cannot decode are measured as Latin-1
    (one character per byte), since json.loads then refuses them before parsing."""
    try:
        return data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def loads(
    text: str | bytes | bytearray, *, max_depth: int = DEFAULT_MAX_DEPTH, **kwargs: Any
) -> Any:
    """`json.loads` that refuses, with JsonTooDeepError (a ValueError), text nesting deeper
    than `max_depth`; malformed text raises json.JSONDecodeError as json.loads does."""
    if not isinstance(text, str):
        data = _bytes_of(text)
        text = data.decode(json.detect_encoding(data), "surrogatepass")  # as json.loads
    if nests_deeper_than(text, max_depth):
        raise JsonTooDeepError(max_depth)
    return json.loads(text, **kwargs)
