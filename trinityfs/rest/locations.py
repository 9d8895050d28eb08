"""Where tables may live: inside the lakehouse's warehouse unless the server allows more.

A REST client chooses table locations (create, set-location, register, a namespace's
`location`, `write.metadata.path`): without a check a client could make the server write
metadata anywhere its credentials reach, or point a table at another table's files. The
rule itself is the catalog's (`trinityfs.catalog.locations`: canonical form, `..`
refused, symlinks resolved, containment by whole segments); this module adds what only
input from the network needs (absolute locations only, no control characters or
backslashes) and turns a refusal into the spec's 403.
"""

from __future__ import annotations

import re

from trinityfs.catalog.locations import ANY_LOCATION, canonical, has_url_special
from trinityfs.catalog.locations import LocationPolicy as CatalogLocationPolicy
from trinityfs.errors import InvalidArgumentError, LocationNotAllowedError
from trinityfs.iceberg.files import default_location_segment
from trinityfs.rest.errors import bad_request, forbidden

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class LocationPolicy:
    """Accepts locations inside one of `allowed` (URL prefixes); `allow_any` disables it."""

    def __init__(self, allowed: list[str], *, allow_any: bool = False):
        self.allow_any = allow_any
        self.catalog_policy = CatalogLocationPolicy([ANY_LOCATION] if allow_any else allowed)
        self._roots = set() if allow_any else {canonical(a) for a in allowed}
        self.shown = ", ".join(allowed) or "(none)"

    def check(self, location: object, what: str = "table location") -> str:
        """`location` (trailing slashes removed) if allowed, else a 400/403 RestError."""
        if not isinstance(location, str) or not location.strip():
            raise bad_request(f"{what} must be a non-empty string")
        location = location.rstrip("/") or location
        if "\\" in location or _CONTROL.search(location):
            raise bad_request(f"{what} {location!r} contains a backslash or control character")
        if "://" not in location and not location.startswith("/"):
            raise bad_request(f"{what} {location!r} is not absolute (give a URL or a path)")
        try:
            self.catalog_policy.check(location, what)
            if canonical(location) in self._roots:  # would contain every other table
                raise LocationNotAllowedError(
                    location, f"{what} {location!r} is an allowed prefix itself, not inside it"
                )
        except LocationNotAllowedError as exc:
            if has_url_special(location):  # no prefix to allow would help
                raise forbidden(str(exc)) from None
            raise forbidden(
                f"{exc}; this server accepts locations inside {self.shown} (start it with "
                "--allow-location PREFIX to add others)"
            ) from None
        return location


def safe_segment(name: str, kind: str) -> None:
    """Refuse a name that cannot be one path segment of a default table location (400;
    the rule of every Iceberg front end: `trinityfs.iceberg.files.default_location_segment`)."""
    try:
        default_location_segment(name, kind)
    except InvalidArgumentError as exc:
        raise bad_request(str(exc)) from None


__all__ = ["LocationPolicy", "safe_segment"]
