"""Confinement: table and metadata locations must lie inside the lakehouse's warehouse.

A definition is data anyone with write access to the catalog can change, so a
`metadata_location` or table `location` read from it is not trusted: before a front end
(the Iceberg catalog, the Spark source, the REST server) reads, writes or deletes at
such a location, it asks `Confinement.check`, which raises OutsideWarehouseError unless
the location is inside the warehouse or one of the configured allowed prefixes.

How a location is compared (lexically first, then by resolving the local filesystem):
- the scheme is normalised (no scheme and file:// are local paths; s3a:// and s3n://
  are s3://); a location with a query or fragment, a NUL byte, or an empty path is refused;
- file:// paths are percent-decoded (that is what a file URI means), then every location's
  path is normalised: `.` and `..` segments are resolved and repeated `/` collapsed,
  so `warehouse/../other` is outside;
- local paths are also resolved through symlinks (os.path.realpath), so a symlink planted
  inside the warehouse that points elsewhere does not lead out;
- inside means equal to a prefix or below it at a `/` boundary (`/wh` does not contain
  `/wh2`).
The warehouse may not be the lakehouse root or contain it: table files would then sit
among (and could overwrite or delete) the lakehouse's own files.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from trinityfs.errors import InvalidArgumentError, OutsideWarehouseError

_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "": "file", "local": "file"}


@dataclass(frozen=True)
class _Place:
    scheme: str
    path: str  # normalised, "/"-separated; for object stores "bucket/key..."

    def contains(self, other: _Place) -> bool:
        if self.scheme != other.scheme:
            return False
        base = self.path.rstrip("/")
        return other.path == base or other.path.startswith(base + "/") or base == ""


def _place(location: str, *, resolve_links: bool = True) -> _Place | None:
    """The normalised place of a location, or None when it cannot be judged safely."""
    if not isinstance(location, str) or not location or "\x00" in location:
        return None
    if "://" in location:
        parts = urlsplit(location)
        if parts.query or parts.fragment or "?" in location or "#" in location:
            return None
        scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                return None
            path = unquote(parts.path)
        else:
            if not parts.netloc and scheme == "s3":
                return None  # no bucket
            path = parts.netloc + "/" + parts.path.lstrip("/")
    else:
        scheme, path = "file", location
    if scheme == "file":
        if not path:
            return None
        path = os.path.abspath(os.path.expanduser(path))
        if resolve_links:
            path = os.path.realpath(path)
        return _Place("file", path)
    normalised = posixpath.normpath("/" + path).lstrip("/")
    if normalised in ("", "."):
        return None
    return _Place(scheme, normalised)


class Confinement:
    """The warehouse of a lakehouse plus an allow-list of other prefixes."""

    def __init__(
        self,
        warehouse: str,
        allowed: Iterable[str] = (),
        *,
        lakehouse_root: str | None = None,
    ):
        place = _place(warehouse)
        if place is None:
            raise InvalidArgumentError(f"warehouse {warehouse!r} is not a usable location")
        self.warehouse = warehouse
        self.allowed = tuple(allowed)
        self._places = [place]
        for prefix in self.allowed:
            extra = _place(prefix)
            if extra is None:
                raise InvalidArgumentError(f"allowed location {prefix!r} is not a usable prefix")
            self._places.append(extra)
        if lakehouse_root is not None:
            root = _place(lakehouse_root)
            if root is not None and any(p.contains(root) for p in self._places):
                raise InvalidArgumentError(
                    f"the warehouse {warehouse!r} (or an allowed location) contains the "
                    f"lakehouse root {lakehouse_root!r}: table files would mix with the "
                    "lakehouse's own files; use a subdirectory such as <root>/warehouse"
                )

    def contains(self, location: str) -> bool:
        """Whether `location` is inside the warehouse or an allowed prefix."""
        place = _place(location)
        return place is not None and any(p.contains(place) for p in self._places)

    def check(self, location: str, what: str = "location") -> str:
        """Return `location` if it is inside; else OutsideWarehouseError naming it."""
        if not self.contains(location):
            allowed = ", ".join(repr(p) for p in (self.warehouse, *self.allowed))
            raise OutsideWarehouseError(
                location,
                f"{what} {location!r:.300} is outside the lakehouse warehouse "
                f"(allowed: {allowed}); refusing to read, write or delete there",
            )
        return location


def is_inside_warehouse(location: str, warehouse: str, allowed: Iterable[str] = ()) -> bool:
    """Whether `location` lies inside `warehouse` or one of the `allowed` prefixes."""
    return Confinement(warehouse, allowed).contains(location)


def check_inside_warehouse(
    location: str, warehouse: str, allowed: Iterable[str] = (), what: str = "location"
) -> str:
    """`location` if inside `warehouse` or `allowed`, else OutsideWarehouseError."""
    return Confinement(warehouse, allowed).check(location, what)


__all__ = ["Confinement", "check_inside_warehouse", "is_inside_warehouse"]
