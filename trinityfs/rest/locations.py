"""Where tables may live: inside the lakehouse's warehouse unless the server allows more.

A REST client chooses table locations (create, set-location, register): without a check
a client could make the server write metadata anywhere its credentials reach, or point a
table at another table's files. A location is accepted only when, after normalization,
it lies strictly inside one of the allowed prefixes (by default the catalog's warehouse),
and it has no `.` or `..` segment, no empty segment, no backslash and no control character.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

from trinityfs.rest.errors import RestError, bad_request, forbidden

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DEFAULT_SCHEME = "file"


def _split(url: str) -> tuple[str, str, str]:
    """(scheme, authority, path) of a location; a bare path is a local file."""
    if "://" not in url:
        if not url.startswith("/"):
            raise bad_request(f"location {url!r} is not absolute (give a URL or an absolute path)")
        return _DEFAULT_SCHEME, "", url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    if parts.query or parts.fragment:
        raise bad_request(f"location {url!r} has a query or fragment")
    return scheme, parts.netloc, parts.path or "/"


def _segments(url: str, path: str) -> list[str]:
    if "\\" in path or _CONTROL.search(path):
        raise bad_request(f"location {url!r} contains a backslash or control character")
    segments = path.strip("/").split("/") if path.strip("/") else []
    for segment in segments:
        decoded = unquote(segment)
        if segment == "" or decoded in (".", "..") or "/" in decoded:
            raise bad_request(
                f"location {url!r} has an empty, '.', '..' or encoded-slash path segment"
            )
    return segments


class LocationPolicy:
    """Accepts locations inside one of `allowed` (URL prefixes); `allow_any` disables it."""

    def __init__(self, allowed: list[str], *, allow_any: bool = False):
        self.allow_any = allow_any
        self.allowed = []
        for prefix in allowed:
            scheme, netloc, path = _split(prefix.rstrip("/") or "/")
            self.allowed.append((scheme, netloc, posixpath.normpath(path)))
        self.shown = ", ".join(allowed) or "(none)"

    def check(self, location: str, what: str = "table location") -> str:
        """`location` (trailing slashes removed) if allowed, else a 400/403 RestError."""
        if not isinstance(location, str) or not location.strip():
            raise bad_request(f"{what} must be a non-empty string")
        location = location.rstrip("/") or location
        scheme, netloc, path = _split(location)
        segments = _segments(location, path)
        if self.allow_any:
            return location
        normalized = "/" + "/".join(segments)
        for a_scheme, a_netloc, a_path in self.allowed:
            if (scheme, netloc) != (a_scheme, a_netloc):
                continue
            base = a_path.rstrip("/") + "/"
            if normalized.startswith(base) and len(normalized) > len(base):
                return location
        raise self.refused(location, what)

    def refused(self, location: str, what: str) -> RestError:
        return forbidden(
            f"{what} {location!r} is outside the warehouse; this server accepts locations "
            f"inside {self.shown} (start it with --allow-location to add others)"
        )


def safe_segment(name: str, kind: str) -> None:
    """Refuse a name that cannot be one path segment of a default table location."""
    if name in (".", "..") or "/" in name or "\\" in name:
        raise bad_request(
            f"{kind} name {name!r} cannot be used as a directory of the default table "
            "location (it is '.', '..' or contains a slash); give an explicit location "
            "inside the warehouse"
        )


__all__ = ["LocationPolicy", "safe_segment"]
