"""Object name rules (FORMAT.md section 3).

A name is 1 to max bytes of UTF-8 and contains no byte 0x00-0x1F, 0x20 (space) or 0x7F.
Because no allowed byte sorts below 0x21, space-padded keys sort like the names.
"""

from __future__ import annotations

import re

from trinityfs.errors import InvalidArgumentError, InvalidNameError, NameTooLongError

_FORBIDDEN = re.compile(r"[\x00-\x20\x7f]")
_SHOWN_CHARS = 60


def _show(name: str) -> str:
    """repr() of a name, shortened so a huge name does not flood an error message."""
    if len(name) > _SHOWN_CHARS:
        return repr(name[:_SHOWN_CHARS]) + f"... ({len(name)} characters)"
    return repr(name)


def validate_name(name: str, max_bytes: int, kind: str = "object") -> str:
    """Return `name` unchanged if it is a valid `kind` name of at most `max_bytes` bytes.

    Raises InvalidNameError whose message names the kind and the rule broken.
    """
    noun = kind if kind.endswith((" name", " id")) else f"{kind} name"
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InvalidArgumentError(
            f"maximum {noun} size must be a positive number of bytes, got {max_bytes!r}"
        )
    if not isinstance(name, str):
        raise InvalidNameError(f"invalid {noun} {name!r}: must be a str, not {type(name).__name__}")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError as exc:
        bad = name[exc.start]
        raise InvalidNameError(
            f"invalid {noun} {_show(name)}: is not valid UTF-8 "
            f"(contains the lone surrogate U+{ord(bad):04X})"
        ) from None
    if size == 0:
        raise InvalidNameError(
            f"invalid {noun} '': is empty; names must be 1 to {max_bytes} bytes of UTF-8"
        )
    match = _FORBIDDEN.search(name)
    if match is not None:
        code = ord(match.group())
        if code == 0x20:
            what = "a space (0x20)"
        elif code == 0x7F:
            what = "the DEL character (0x7F)"
        else:
            what = f"a control character (0x{code:02X})"
        raise InvalidNameError(
            f"invalid {noun} {_show(name)}: contains {what}, which names may not contain"
        )
    if size > max_bytes:
        raise NameTooLongError(
            f"invalid {noun} {_show(name)}: is {size} bytes in UTF-8, "
            f"more than the maximum of {max_bytes} bytes"
        )
    return name
