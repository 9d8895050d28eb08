"""Catalog-wide time travel: the warehouse a client asks for and the URL prefix it gets.

The grammar is the one of `trinity://` paths:

    latest                 the latest version (the default; the only writable one)
    v/latest               the same
    v/<n>                  catalog version n
    v/<export name>        the version an export snapshot keeps
    v/<ISO-8601 time>      the version current at that time (UTC unless an offset is given)

with one precedence for `v/<x>`: digits, then an export name, then an ISO time.
A client sends the selector as its `warehouse` (GET /v1/config?warehouse=v/12) and gets it
back as the `prefix` override, so every later request names it: /v1/v/12/namespaces/...
A time is resolved once, at config time, to the version it names (`v/<n>`), so a client's
view does not drift while it runs. Every prefix other than `latest` is read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from trinityfs.catalog import Lakehouse
from trinityfs.errors import TrinityError, VersionNotFoundError
from trinityfs.fs.paths import parse_time

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


def _grammar() -> str:
    return (
        "use 'latest', 'v/<version number>', 'v/<export name>' or 'v/<ISO-8601 time>' "
        "(e.g. v/12, v/2026-01-31T12:00:00Z)"
    )


def resolve(lake: Lakehouse, selector: str | None, *, fix_time: bool = False) -> Pin:
    """The catalog version `selector` names (NoSuchWarehouseError if none).

    `fix_time` turns a time into the version number it names (for the config endpoint).
    """
    text = (selector or "").strip()
    if text in ("", LATEST, f"{VERSIONS}/{LATEST}"):
        return Pin(None, LATEST)
    head, sep, label = text.partition("/")
    if head != VERSIONS or not sep or not label or "/" in label:
        raise NoSuchWarehouseError(f"unknown warehouse or prefix {text!r}: {_grammar()}")
    if label.isascii() and label.isdigit():
        version = int(label)
        _check_readable(lake, version, text)
        return Pin(version, f"{VERSIONS}/{version}")
    exports = {e.name: e for e in lake.exports()}
    if label in exports:
        info = exports[label]
        if info.version is None:
            raise NoSuchWarehouseError(f"{text!r}: export {label!r} cannot be read: {info.problem}")
        return Pin(info.version, f"{VERSIONS}/{quote(label, safe='')}", label)
    millis = parse_time(label)
    if millis is None:
        raise NoSuchWarehouseError(
            f"{text!r} names no version: {label!r} is not a version number, an export of "
            f"this lakehouse or an ISO-8601 time; {_grammar()}"
        )
    try:
        version = lake.version_at(millis)
    except VersionNotFoundError as exc:
        raise NoSuchWarehouseError(f"{text!r}: {exc}") from None
    prefix = f"{VERSIONS}/{version}" if fix_time else f"{VERSIONS}/{quote(label, safe=':+')}"
    return Pin(version, prefix)


def _check_readable(lake: Lakehouse, version: int, text: str) -> None:
    oldest, latest = lake.oldest_version(), lake.latest_version()
    if not oldest <= version <= latest:
        raise NoSuchWarehouseError(
            f"{text!r}: catalog version {version} is not readable (readable versions are "
            f"{oldest} to {latest})"
        )


__all__ = ["LATEST", "NoSuchWarehouseError", "Pin", "resolve"]
