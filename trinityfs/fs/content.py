"""File content of the trinity:// filesystem.

The rendering and parsing of definition files live in `trinityfs.catalog.content` (one
semantic for every front end) and are re-exported here until every front end imports the
catalog module directly. `could_become_valid` (refusing a streaming write early) is the
filesystem's own.
"""

from __future__ import annotations

import re

from trinityfs.catalog.content import (
    ENVELOPE_KEYS,
    FILE_KINDS,
    Content,
    ContentError,
    definition_dict,
    dumps,
    parse,
    render,
    to_message,
)

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


__all__ = [
    "ENVELOPE_KEYS",
    "FILE_KINDS",
    "Content",
    "ContentError",
    "could_become_valid",
    "definition_dict",
    "dumps",
    "parse",
    "render",
    "to_message",
]
