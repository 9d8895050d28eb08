"""Where table files may live: a lakehouse's warehouse plus a configured allow-list.

A table definition is data anyone with write access to the catalog can set (through
`trinity://`, the CLI, the mount): its `metadata_location` could name `/etc/passwd` or
another lakehouse's files. Every front end that follows such a pointer (the PyIceberg
catalog, the Spark source, the REST server) checks it here BEFORE reading, writing or
deleting anything, and refuses with `LocationNotAllowedError` naming the location.

Locations are compared in a canonical form: scheme aliases folded (`s3a`, `s3n` -> `s3`,
no scheme -> `file`), `..` segments refused outright (raw or percent-encoded), local
paths made absolute with symlinks resolved (a symlink planted inside the warehouse that
points outside it is outside), and containment is by whole path segments
(`/lake/warehouse2` is not inside `/lake/warehouse`).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from trinityfs.errors import InvalidArgumentError, LocationNotAllowedError

DEFAULT_WAREHOUSE_DIR = "warehouse"
ALLOWED_LOCATIONS = "allowed-locations"  # the config key: comma-separated URL prefixes
ANY_LOCATION = "*"  # as the allow-list: no confinement (an explicit opt-out)
# PyArrow and fsspec read `?` and `#` as the start of a URL query or fragment: files of
# `.../t?x/metadata/...` would be written as the file `.../t`, the table committed
# pointing at nothing; refused everywhere, even with ANY_LOCATION
URL_SPECIAL = re.compile(r"[?#]")


def has_url_special(location: str) -> bool:
    """Whether `location` holds a character PyArrow and fsspec read as a URL query or
    fragment (`?`, `#`): such a location is never allowed (LocationPolicy.check)."""
    return bool(URL_SPECIAL.search(location))


_FORMAT_DIR = re.compile(r"[01]{4}")  # FORMAT.md's optimized-path directories
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs"}


@dataclass(frozen=True)
class CanonicalLocation:
    scheme: str
    netloc: str
    path: str  # absolute, no trailing slash (except the root "/")

    def contains(self, other: CanonicalLocation) -> bool:
        if (self.scheme, self.netloc) != (other.scheme, other.netloc):
            return False
        if self.path in ("", "/") or other.path == self.path:
            return True
        return other.path.startswith(self.path + "/")

    def __str__(self) -> str:
        if self.scheme == "file":
            return self.path
        return f"{self.scheme}://{self.netloc}{self.path}"


def _refuse(location: str, why: str) -> LocationNotAllowedError:
    return LocationNotAllowedError(location, f"location {location!r} is not allowed: {why}")


def canonical(location: str) -> CanonicalLocation:
    """The canonical form of a location URL or local path (see the module doc)."""
    text = str(location).strip()
    if not text or "\x00" in text:
        raise _refuse(str(location), "empty or contains a NUL character")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise _refuse(ascii(text), "not valid UTF-8 (a lone surrogate)") from None
    if "://" in text:
        parts = urlsplit(text)
        scheme, netloc, path = parts.scheme.lower(), parts.netloc, parts.path
    elif text.startswith("file:"):
        scheme, netloc, path = "file", "", text[len("file:") :]
    else:
        scheme, netloc, path = "file", "", text
    scheme = _SCHEME_ALIASES.get(scheme, scheme)
    for candidate in (path, unquote(path)):
        if any(seg == ".." for seg in candidate.replace("\\", "/").split("/")):
            raise _refuse(text, "'..' path segments are not accepted in table locations")
    if scheme == "file":
        if netloc not in ("", "localhost"):
            raise _refuse(text, f"file URL with a host ({netloc!r})")
        return CanonicalLocation("file", "", os.path.realpath(os.path.abspath(path or "/")))
    if scheme == "memory":  # fsspec's memory filesystem: host and path are one path
        path = "/" + (netloc + path).lstrip("/")
        netloc = ""
    norm = posixpath.normpath("/" + path.lstrip("/"))
    return CanonicalLocation(scheme, netloc, "/" if norm == "/" else norm.rstrip("/"))


def parse_allow_list(value: str | Iterable[str] | None) -> list[str]:
    """The `allowed-locations` setting: a comma-separated string or a list of URLs."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple | set | frozenset) and all(
        isinstance(item, str) for item in value
    ):
        items = list(value)
    else:
        raise InvalidArgumentError(
            f"allowed locations must be a comma-separated str or a list of str, got {value!r}"
        )
    return [item.strip() for item in items if item.strip()]


def default_warehouse(lakehouse_url: str) -> str:
    """`<lakehouse root>/warehouse`: where table files go unless configured otherwise."""
    return lakehouse_url.rstrip("/") + "/" + DEFAULT_WAREHOUSE_DIR


class LocationPolicy:
    """The prefixes table files may live under; `check()` before any file access."""

    def __init__(self, allowed: Iterable[str]):
        self.allowed: tuple[str, ...] = tuple(allowed)
        if not self.allowed:
            raise ValueError("a location policy needs at least one allowed location")
        self.allow_any = ANY_LOCATION in self.allowed
        self._canon = tuple(canonical(a) for a in self.allowed if a != ANY_LOCATION)

    #: the lakehouse's own directory (set by `for_lakehouse`): never table files
    _lakehouse: CanonicalLocation | None = None
    _warehouse: CanonicalLocation | None = None

    @classmethod
    def for_lakehouse(
        cls,
        lakehouse_url: str,
        warehouse: str | None = None,
        extra: str | Iterable[str] | None = None,
    ) -> LocationPolicy:
        """The warehouse (default `<root>/warehouse`) plus the `allowed-locations` list.

        The lakehouse's own files are never table files: a warehouse that is the root
        or above it, or inside one of the root's format directories, is refused
        (LocationNotAllowedError); table locations inside the root but outside the
        warehouse are refused whatever the allow-list says (a purge there would delete
        the lakehouse's node and definition files).
        """
        warehouse = warehouse or default_warehouse(lakehouse_url)
        policy = cls([warehouse, *parse_allow_list(extra)])
        root = canonical(lakehouse_url)
        where = canonical(warehouse)
        problem = None
        if where.contains(root):
            problem = "is the lakehouse root or a directory above it"
        elif root.contains(where):
            first = where.path[len(root.path) :].strip("/").split("/")[0]
            if first.startswith("_") or _FORMAT_DIR.fullmatch(first):
                problem = f"is inside {first!r}, where the lakehouse keeps its own files"
        if problem is not None:
            raise LocationNotAllowedError(
                warehouse,
                f"warehouse {warehouse!r} {problem} ({lakehouse_url}): table files there "
                "could overwrite or purge the lakehouse's own files; use a directory "
                f"inside the root (the default is <root>/{DEFAULT_WAREHOUSE_DIR}) or "
                "outside it",
            )
        policy._lakehouse, policy._warehouse = root, where
        return policy

    def _inside_lakehouse_files(self, loc: CanonicalLocation) -> bool:
        """Inside the lakehouse root but not inside its warehouse."""
        root, warehouse = self._lakehouse, self._warehouse
        return (
            root is not None
            and warehouse is not None
            and root.contains(loc)
            and not warehouse.contains(loc)
        )

    def allows(self, location: str) -> bool:
        if self.allow_any:
            return True
        try:
            loc = canonical(location)
        except LocationNotAllowedError:
            return False
        if self._inside_lakehouse_files(loc):
            return False
        return any(prefix.contains(loc) for prefix in self._canon)

    def check(self, location: str, what: str = "location") -> str:
        """`location` unchanged when allowed; else LocationNotAllowedError naming it.
        A `?` or `#` is refused whatever the allow-list (`URL_SPECIAL`)."""
        if isinstance(location, str) and has_url_special(location):
            raise LocationNotAllowedError(
                location,
                f"{what} {location!r} contains '?' or '#', which file systems read as a URL "
                "query or fragment (the files would be written elsewhere): give a location "
                "without them",
            )
        if self.allow_any:
            return location
        try:
            loc = canonical(location)
        except LocationNotAllowedError as exc:
            raise LocationNotAllowedError(location, f"{what} {exc}") from None
        if self._inside_lakehouse_files(loc):
            raise LocationNotAllowedError(
                location,
                f"{what} {location!r} is inside the lakehouse root {self._lakehouse} but "
                f"outside its warehouse {self._warehouse}: the lakehouse's own files are "
                "never table files; nothing was read, written or deleted there",
            )
        if not any(prefix.contains(loc) for prefix in self._canon):
            raise LocationNotAllowedError(
                location,
                f"{what} {location!r} is outside the lakehouse's allowed locations "
                f"({', '.join(self.allowed)}); nothing was read, written or deleted there. "
                f"To allow it, add its prefix to the '{ALLOWED_LOCATIONS}' setting",
            )
        return location


def is_inside_warehouse(
    location: str, warehouse: str, allowed: str | Iterable[str] | None = None
) -> bool:
    """Whether `location` lies inside `warehouse` or one of the `allowed` prefixes."""
    return LocationPolicy([warehouse, *parse_allow_list(allowed)]).allows(location)


__all__ = [
    "ALLOWED_LOCATIONS",
    "ANY_LOCATION",
    "DEFAULT_WAREHOUSE_DIR",
    "URL_SPECIAL",
    "CanonicalLocation",
    "LocationPolicy",
    "canonical",
    "default_warehouse",
    "has_url_special",
    "is_inside_warehouse",
    "parse_allow_list",
]
