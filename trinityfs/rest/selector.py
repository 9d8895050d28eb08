"""Catalog-wide time travel: the warehouse a client asks for and the URL prefix it gets.

    latest                 the latest version (the default; the only writable one)
    v/latest               the same
    v/<selector>           what the catalog's `Lakehouse.resolve(selector)` names: a version
                           number, an export (`export:<name>` or a bare name), a time
                           (`time:<ISO>` or a bare ISO-8601 time, UTC unless an offset)

with the catalog's one precedence (trinityfs/catalog/selector.py): digits, then
export:/time:, then an export name, then an ISO time. A client sends the selector as its
`warehouse` (GET /v1/config?warehouse=v/12) and gets it back as the `prefix` override, so
every later request names it: /v1/v/12/namespaces/... A time is resolved once, at config
time, to the version it names (`v/<n>`), so a client's view does not drift while it runs.
Every prefix other than `latest` (and its alias `v/latest`) is read-only.

A version number in a URL prefix has one spelling, as in the fs/FUSE/CLI paths (`/v/1`,
never `/v/01`): `v/01`, `v/0001`, and any prefix with spaces around it (` latest`,
`v/1 `) name nothing (404 NoSuchWarehouseException naming the one spelling). Exports
and times are selectors in a prefix as they are in `/v/<selector>` paths: `v/e1` and
`v/export:e1` both read export e1, and a time is read in any ISO-8601 spelling
(`v/time:...`, `...Z`, `...+00:00`); the server itself hands a time out as `v/<n>`. A
`warehouse` given to GET /v1/config is read like the CLI's `--version` (spaces around,
leading zeros), its answer being one prefix. Percent-encoded unreserved characters
(`v/%31`) are the same URL as `v/1` (RFC 3986, 6.2.2.2), not another spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from trinityfs.catalog import Lakehouse
from trinityfs.catalog.selector import MAX_VERSION_DIGITS
from trinityfs.errors import (
    InvalidArgumentError,
    NotFoundError,
    TrinityError,
    VersionNotFoundError,
)

LATEST = "latest"
VERSIONS = "v"


@dataclass(frozen=True)
class Pin:
    """What a prefix reads: the latest version (version None) or a fixed one."""

    version: int | None
    prefix: str  # the URL prefix naming it ("latest", "v/12", "v/<export>")
    export: str | None = None  # read through the export (it outlives expired versions)

    @property
    def read_only(self) -> bool:
        return self.version is not None


class NoSuchWarehouseError(TrinityError):
    """The warehouse or prefix names no readable catalog version."""


class LostVersionError(TrinityError):
    """A catalog version that should be readable is missing from storage: its root is
    gone although older and newer versions are kept (a server-side loss, 500; never
    "no such warehouse", which says the client asked for something that is not there)."""


def unreadable(lake: Lakehouse, version: int, prefix: str, exc: Exception) -> TrinityError:
    """Why catalog version `version` could not be read: NoSuchWarehouseError (404) when
    no such version is kept (beyond the latest, or expired: expiration moves the oldest
    marker before it deletes a root), LostVersionError (500) when it lies between the
    oldest kept version and the latest."""
    oldest, latest = lake.oldest_version(), lake.latest_version()
    if oldest <= version <= latest:
        return LostVersionError(
            f"prefix {prefix!r}: catalog version {version} is missing from storage although "
            f"versions {oldest} to {latest} are kept: {exc}"
        )
    return NoSuchWarehouseError(
        f"prefix {prefix!r}: catalog version {version} is not readable: {exc}"
    )


def _grammar() -> str:
    return (
        "use 'latest', 'v/<version number>', 'v/<export name>' or 'v/<ISO-8601 time>' "
        "(e.g. v/12, v/2026-01-31T12:00:00Z)"
    )


def version_prefix(label: str) -> int | None:
    """The version a URL prefix `v/<label>` names when `label` is ASCII digits, else
    None; NoSuchWarehouseError for digits that are not the one spelling of a version
    (leading zeros) or name none (beyond 2^64-1), before any conversion of them."""
    if not (label.isascii() and label.isdigit()):
        return None
    canonical = label.lstrip("0") or "0"
    if len(canonical) > MAX_VERSION_DIGITS or int(canonical) >= 2**64:
        raise NoSuchWarehouseError(
            f"prefix {_short(VERSIONS + '/' + label)!r} names no catalog version: version "
            "numbers are 0..2^64-1"
        )
    if canonical != label:
        raise NoSuchWarehouseError(
            f"prefix {_short(VERSIONS + '/' + label)!r} is not a name of a catalog version: "
            f"a version is named by its number without leading zeros ('v/{canonical}')"
        )
    return int(label)


def _short(text: str) -> str:
    return text if len(text) <= 48 else f"{text[:24]}...{text[-12:]}"


def resolve(
    lake: Lakehouse, selector: str | None, *, fix_time: bool = False, prefix: bool = False
) -> Pin:
    """The catalog version `selector` names (NoSuchWarehouseError if none).

    `fix_time` turns a time into the version number it names (for the config endpoint).
    `prefix`: `selector` is a URL prefix: no spaces around it, a version number without
    leading zeros; else it is a warehouse (read leniently).
    """
    text = selector or ""
    if not prefix:
        text = text.strip()
    elif text != text.strip():
        raise NoSuchWarehouseError(
            f"prefix {_short(text)!r} is not a name of a catalog version: no spaces around "
            f"it ({_short(text.strip())!r})"
        )
    if text in ("", LATEST, f"{VERSIONS}/{LATEST}"):
        return Pin(None, LATEST)
    head, sep, label = text.partition("/")
    if head != VERSIONS or not sep or not label or "/" in label:
        raise NoSuchWarehouseError(f"unknown warehouse or prefix {_short(text)!r}: {_grammar()}")
    if prefix:
        version_prefix(label)
    try:
        chosen = lake.resolve(label)
    except VersionNotFoundError as exc:
        if label.isascii() and label.isdigit():
            lost = unreadable(lake, int(label), text, exc)
            if isinstance(lost, LostVersionError):
                raise lost from None
        raise NoSuchWarehouseError(
            f"{text!r} names no readable version: {exc}; {_grammar()}"
        ) from None
    except (NotFoundError, InvalidArgumentError) as exc:
        raise NoSuchWarehouseError(
            f"{text!r} names no readable version: {exc}; {_grammar()}"
        ) from None
    if chosen.how == "latest":
        return Pin(None, LATEST)
    if chosen.how == "version":
        return Pin(chosen.version, f"{VERSIONS}/{chosen.version}")
    if chosen.how == "export":
        return Pin(chosen.version, f"{VERSIONS}/{quote(label, safe='')}", chosen.export)
    prefix = f"{VERSIONS}/{chosen.version}" if fix_time else f"{VERSIONS}/{quote(label, safe=':+')}"
    return Pin(chosen.version, prefix)


__all__ = [
    "LATEST",
    "LostVersionError",
    "NoSuchWarehouseError",
    "Pin",
    "resolve",
    "unreadable",
    "version_prefix",
]
