"""Parsing what a REST request carries: path identifiers, JSON bodies, page tokens.

Everything a client sends is checked here, so handlers see typed, validated values and
every malformed request ends as a 400 naming the problem.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote

from pydantic import ValidationError

from trinityfs import jsontext
from trinityfs.errors import JsonTooDeepError
from trinityfs.rest.errors import RestError, bad_request, not_found

# the spec's default namespace separator (%1F); TrinityLake namespaces have one level
NAMESPACE_SEPARATOR = "\x1f"
DEFAULT_PAGE_SIZE = 1000
MAX_PAGE_SIZE = 10_000
MAX_JSON_DEPTH = 64
# Iceberg's JSON numbers are ints and longs: an integer beyond 64 bits is no field of it,
# and one stored would make the metadata unreadable to other clients (Java's parser)
MAX_INT_DIGITS = 19
INT64 = range(-(2**63), 2**63)

T = TypeVar("T")


class _NotIcebergJson(ValueError):
    """JSON no Iceberg request holds: an integer beyond 64 bits, NaN, Infinity, a name
    twice in one object."""


def _int64(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits.lstrip("0")) > MAX_INT_DIGITS or int(text) not in INT64:
        shown = text if len(text) <= 32 else f"{text[:16]}...({len(text)} characters)"
        raise _NotIcebergJson(f"the integer {shown} is outside the 64-bit range")
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotIcebergJson(f"{text[:32]} is beyond the range of a double")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose names are unique: with a name twice, parsers disagree on which
    value counts (Python's and Jackson's take the last, others the first), so a proxy
    that checks one value and a server that acts on the other see different requests."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _NotIcebergJson(f"the name {twice[:64]!r} appears twice in one object")
    return value


def _no_constant(name: str) -> float:
    raise _NotIcebergJson(f"{name} is not a JSON number")


def path_text(raw: str, what: str) -> str:
    """A percent-decoded path segment (strict UTF-8)."""
    try:
        text = unquote(raw, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise bad_request(f"{what} {raw!r} is not valid percent-encoded UTF-8") from None
    if not text:
        raise bad_request(f"{what} is empty")
    return text


def namespace_param(raw: str, *, for_write: bool = False) -> str:
    """The namespace of a path parameter (`a` or, multi-level, `a%1Fb`)."""
    text = path_text(raw, "namespace")
    parts = text.split(NAMESPACE_SEPARATOR)
    if len(parts) != 1:
        return _one_level(parts, for_write)
    return text


def _one_level(parts: list[str], for_write: bool) -> str:
    shown = ".".join(parts)
    message = (
        f"namespace {shown!r} has {len(parts)} levels; a TrinityLake lakehouse has one "
        "level of namespaces (identifiers are namespace.table)"
    )
    if for_write:
        raise bad_request(message)
    raise not_found("NoSuchNamespaceException", f"Namespace does not exist: {shown} ({message})")


def namespace_json(value: Any, *, what: str = "namespace", for_write: bool = True) -> str:
    """The namespace of a JSON body: a list of one non-empty string."""
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise bad_request(f"{what} must be a list of strings, not {_kind(value)}")
    if not value or any(not p.strip() for p in value):
        raise bad_request(f"{what} {value!r} is empty or has an empty or blank level")
    if len(value) != 1:
        return _one_level(value, for_write)
    return value[0]


def identifier_json(value: Any, what: str, *, for_write: bool = True) -> tuple[str, str]:
    """A TableIdentifier ({"namespace": [...], "name": "..."}) as (namespace, name)."""
    if not isinstance(value, dict):
        raise bad_request(f"{what} must be an object with 'namespace' and 'name'")
    ns = namespace_json(value.get("namespace"), what=f"{what}.namespace", for_write=for_write)
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request(f"{what}.name must be a non-empty string")
    return ns, name


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, iteratively (no recursion on hostile input)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def json_content_type(value: str | None) -> None:
    """A request body must be declared JSON (`application/json`, or a `+json` type): 415
    otherwise. A browser sends a cross-site POST without asking first (no CORS preflight)
    only as text/plain, form data or without a type, so refusing those keeps a web page
    from driving a server on localhost that has no tokens."""
    media = (value or "").split(";", 1)[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return
    raise RestError(
        415,
        "BadRequestException",
        f"the request body must be sent as Content-Type: application/json, not "
        f"{(value or '(none)')[:100]!r}",
    )


def json_object(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object (400 for anything else)."""
    if not body.strip():
        raise bad_request("the request needs a JSON object body")
    try:
        value = jsontext.loads(
            body,
            max_depth=MAX_JSON_DEPTH,
            parse_int=_int64,
            parse_float=_finite,
            parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except JsonTooDeepError:
        raise bad_request(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except _NotIcebergJson as exc:
        raise bad_request(f"the request body is not valid here: {exc}") from None
    except UnicodeDecodeError:
        raise bad_request("the request body is not UTF-8") from None
    except ValueError as exc:
        raise bad_request(f"the request body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise bad_request(f"the request body must be a JSON object, not {_kind(value)}")
    if _depth(value) > MAX_JSON_DEPTH:
        raise bad_request(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def validated(validate: Callable[[Any], T], value: Any, what: str) -> T:
    """`validate(value)` (a pydantic validation of PyIceberg models), where a value of the
    wrong type that PyIceberg's own validators trip over (`.items()` of a list: an
    AttributeError, a TypeError, a KeyError) is a 400 naming `what`, as a ValidationError
    is, never a 500."""
    try:
        return validate(value)
    except ValidationError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        raise bad_request(
            f"invalid {what}: a value has the wrong type ({type(exc).__name__}: {exc})"
        ) from None


def string_map(value: Any, what: str) -> dict[str, str]:
    """A JSON object of string values (None is an empty map)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise bad_request(f"{what} must be an object whose values are strings")
    return dict(value)


def string_list(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_request(f"{what} must be a list of strings")
    return list(value)


def optional_bool(value: Any, what: str, default: bool = False) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise bad_request(f"{what} must be true or false, not {value!r}")
    return value


def query_bool(value: str | None, what: str) -> bool:
    if value is None or value == "":
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise bad_request(f"query parameter {what} must be true or false, not {value!r}")


def page(token: str | None, size: str | None) -> tuple[bool, str | None, int]:
    """(paginate?, start after, page size) from the pageToken and pageSize parameters.

    As the spec says: without a pageToken the whole listing comes in one response; an
    empty pageToken starts a paginated listing.
    """
    limit = DEFAULT_PAGE_SIZE
    if size not in (None, ""):
        if not (size.isascii() and size.isdigit() and len(size) <= 20) or int(size) < 1:
            raise bad_request(f"pageSize must be a positive integer, not {size!r}")
        limit = min(int(size), MAX_PAGE_SIZE)
    if token is None:
        return False, None, limit
    if token == "":
        return True, None, limit
    try:
        padded = token + "=" * (-len(token) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii"))
        decoded = jsontext.loads(raw, max_depth=1)  # a token this server issues is flat
        after = decoded["after"]
        if not isinstance(after, str):
            raise TypeError
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeError):
        raise bad_token(token) from None
    return True, after, limit


def bad_token(token: str | None) -> RestError:
    """400 for a pageToken this server did not issue."""
    return bad_request(f"pageToken {(token or '')[:80]!r} is not a token this server issued")


def next_token(last: str) -> str:
    raw = json.dumps({"after": last}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "NAMESPACE_SEPARATOR",
    "bad_token",
    "identifier_json",
    "json_content_type",
    "json_object",
    "namespace_json",
    "namespace_param",
    "next_token",
    "optional_bool",
    "page",
    "path_text",
    "query_bool",
    "string_list",
    "string_map",
]
