"""The path grammar of the trinity:// filesystem.

    /                          the latest version: namespaces as directories
    /<ns>                      a namespace: its tables and views as files
    /<ns>/<name>               a table or view: its definition as JSON
    /v                         the versions: <oldest>..<latest>, latest, export names
                               (not listed at /, like a hidden snapshot directory)
    /v/latest/...              the latest version (an alias of /, writable; the way to
                               reach a namespace that is itself named "v")
    /v/<n>/...                 version n (decimal digits), read-only
    /v/<ISO-8601 time>/...     the version current at that time, read-only
    /v/<export name>/...       an exported snapshot, read-only (when exports exist)

`trinity://` (or `trinity::`) in front is stripped; empty components (`//`), `.` and
trailing slashes are ignored and `..` goes up one level (as in URLs). Parsing is pure:
whether a version, export, namespace or object exists is decided by the filesystem when
it resolves the path.

Names (one escaping for trinity://, the CLI and the mount): a catalog name may hold any
character FORMAT.md allows, including `/`, `%`, glob characters, or be `.` or `..`. In a
path, each component is percent-decoded (`%XX`, UTF-8), and listings show names encoded
the one way `encode_name` does: `%` as `%25`, `/` as `%2F`, and a name that is exactly
`.` or `..` as `%2E` / `%2E%2E`. Everything else is shown as it is, and only that one
spelling is a path of the name (`%74` is not `t`, `%2f` is not `/`: PathNameError,
which a lookup answers as no such file). Glob characters
(`* ? [ ]`) are never special in a path: only pattern APIs (fsspec's `glob`, `find` with
a pattern, an explicit glob flag of the CLI) expand them, where `[*]` matches a literal
`*`.
"""

from __future__ import annotations

import errno
import functools
import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from trinityfs.catalog.selector import parse_selector, parse_time
from trinityfs.errors import InvalidArgumentError

PROTOCOL = "trinity"
VERSIONS_DIR = "v"
LATEST = "latest"

RefKind = Literal["latest", "number", "label"]


@dataclass(frozen=True)
class VersionRef:
    """Which version a path reads: the latest, a number, or a label (export or time)."""

    kind: RefKind
    text: str  # as written in the path ("" for the plain latest root "/")
    number: int | None = None
    millis: int | None = None  # for a label that parses as an ISO-8601 time

    @property
    def is_latest(self) -> bool:
        return self.kind == "latest"


@dataclass(frozen=True)
class TrinityPath:
    """A parsed path: the version it reads and up to two catalog names below it."""

    path: str  # canonical form: leading "/", no trailing or doubled "/"
    ref: VersionRef | None  # None for the versions directory /v itself
    prefix: str  # "" for "/", else "/v/<text>": the root of that version's tree
    namespace: str | None = None
    name: str | None = None
    extra: tuple[str, ...] = ()  # components below an object (never exist)

    @property
    def is_versions_dir(self) -> bool:
        return self.ref is None

    @property
    def depth(self) -> int:
        """0 for a version root, 1 a namespace, 2 an object, 3+ deeper than the catalog."""
        if self.ref is None:
            return 0
        return (self.namespace is not None) + (self.name is not None) + len(self.extra)

    @property
    def writable(self) -> bool:
        """Only the latest version can change (through / or /v/latest)."""
        return self.ref is not None and self.ref.is_latest

    @property
    def is_root(self) -> bool:
        return self.ref is not None and self.namespace is None

    @property
    def is_namespace(self) -> bool:
        return self.namespace is not None and self.name is None

    @property
    def is_object(self) -> bool:
        return self.name is not None and not self.extra

    def child(self, name: str) -> str:
        """The path of a child entry (`name` is a catalog name: encoded here)."""
        return f"{self.path.rstrip('/')}/{encode_name(name)}"

    def with_names(self, namespace: str | None, name: str | None = None) -> str:
        """The path of another namespace or object of the same version."""
        parts = [self.prefix] + [encode_name(p) for p in (namespace, name) if p is not None]
        return "/".join(parts) or "/"


class PathNameError(ValueError):
    """A path component that is not a valid percent-encoding of a name; carries errno
    EINVAL, like the filesystem's other ValueErrors (fs/errors.InvalidRequest)."""

    errno = errno.EINVAL


DOT_NAMES = {".": "%2E", "..": "%2E%2E"}


def encode_name(name: str) -> str:
    """A catalog name as one path component (see the module docstring)."""
    if name in DOT_NAMES:
        return DOT_NAMES[name]
    if "%" in name or "/" in name:
        return name.replace("%", "%25").replace("/", "%2F")
    return name


def decode_name(component: str) -> str:
    """The catalog name a path component stands for (inverse of `encode_name`).

    Only the spelling `encode_name` gives is accepted, so each name has one path: `%74`
    for `t`, `%2f` for `/` or `%C3%A9` for `é` is PathNameError (a lookup answers
    no such file; `/v/00001` is refused alike by the path model)."""
    if "%" not in component:
        return component
    try:
        name = unquote(component, errors="strict")
    except UnicodeDecodeError:
        raise PathNameError(
            f"{component!r}: its %XX escapes are not UTF-8; write a literal % as %25"
        ) from None
    spelled = encode_name(name)
    if spelled != component:
        raise PathNameError(
            f"{component!r} is not how paths spell {name!r}: write {spelled!r} "
            "(only % is escaped, as %25, and / as %2F)"
        )
    return name


def strip_protocol(path: str | os.PathLike) -> str:
    """The canonical form of a path: protocol removed, leading '/', no empty or `.`
    components, `..` applied. Names stay encoded (see `encode_name`)."""
    text = os.fspath(path)
    for marker in (f"{PROTOCOL}://", f"{PROTOCOL}::"):
        if text.startswith(marker):
            text = text[len(marker) :]
            break
    parts: list[str] = []
    for part in text.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def parse_ref(text: str) -> VersionRef:
    """The version selector of `/v/<text>`, read by the catalog's one selector parser
    (`trinityfs.catalog.selector`; which export or time it means is decided when the
    path is resolved)."""
    try:
        parsed = parse_selector(text)
    except InvalidArgumentError:  # e.g. "time:" without a time: resolves to nothing
        return VersionRef("label", text)
    if parsed.how == "latest":
        return VersionRef("latest", text)
    if parsed.how == "version":
        return VersionRef("number", text, number=parsed.number)
    return VersionRef("label", text, millis=parsed.millis)


def parse_path(path: str | os.PathLike) -> TrinityPath:
    """Parse a filesystem path (with or without `trinity://`) into a `TrinityPath`.

    Parsing depends on the text alone and a TrinityPath never changes, so parsed
    strings are remembered (a warm `cat` parses the same few paths again and again)."""
    if isinstance(path, str):
        return _parse_text(path)
    return _parse(path)


@functools.lru_cache(maxsize=8192)
def _parse_text(path: str) -> TrinityPath:
    return _parse(path)


def _parse(path: str | os.PathLike) -> TrinityPath:
    canonical = strip_protocol(path)
    parts = canonical.split("/")[1:] if canonical != "/" else []
    if parts and parts[0] == VERSIONS_DIR:
        if len(parts) == 1:
            return TrinityPath(canonical, None, "/" + VERSIONS_DIR)
        ref = parse_ref(decode_name(parts[1]))
        prefix = f"/{VERSIONS_DIR}/{parts[1]}"
        rest = parts[2:]
    else:
        ref = VersionRef("latest", "")
        prefix = ""
        rest = parts
    namespace = decode_name(rest[0]) if rest else None
    name = decode_name(rest[1]) if len(rest) > 1 else None
    return TrinityPath(canonical, ref, prefix, namespace, name, tuple(rest[2:]))


__all__ = [
    "LATEST",
    "PROTOCOL",
    "VERSIONS_DIR",
    "PathNameError",
    "TrinityPath",
    "VersionRef",
    "decode_name",
    "encode_name",
    "parse_path",
    "parse_ref",
    "parse_time",
    "strip_protocol",
]
