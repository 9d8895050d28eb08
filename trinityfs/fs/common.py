"""Constants and small helpers shared by the modules of the trinity:// filesystem."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from trinityfs.catalog.config import LakehouseConfig, read_config
from trinityfs.catalog.paths import Place
from trinityfs.fs.paths import (
    LATEST,
    VERSIONS_DIR,
    TrinityPath,
    encode_name,
)

DEFAULT_ROOT = "lakehouse"
ROOT_ENV = "TRINITYFS_ROOT"
SIZE_THREADS = 16
LISTING_CACHE_ENTRIES = 1_000_000  # entries over all cached listings
SNAPSHOT_CACHE = 16
CATALOG_CACHE = 2  # whole-catalog scans (find, glob, du) of the last versions
NAMESPACE_PAGE = 1000
TWO_LEVELS = "the catalog is two levels deep: /<namespace>/<table or view>"


def default_root() -> str:
    """The root used when none is given: $TRINITYFS_ROOT, else ./lakehouse."""
    return os.environ.get(ROOT_ENV) or DEFAULT_ROOT


def resolve_root(root: str | os.PathLike | None) -> str:
    """A lakehouse URL; a local path becomes absolute (workers may run elsewhere)."""
    text = os.fspath(root) if root is not None else default_root()
    if "://" not in text:
        text = os.path.abspath(os.path.expanduser(text))
    return text


OPTIONS = ("root", "storage_options", "create", "max_staleness_seconds", "verify", "anon")


def filesystem_config(
    root: str | os.PathLike | None,
    storage_options: dict[str, Any] | None,
    max_staleness_seconds: float | str | None,
    verify: str | None,
    extra: dict[str, Any],
) -> LakehouseConfig:
    """The configuration of a trinity:// filesystem, by the catalog's one reader
    (`read_config`: arguments, then TRINITYFS_* variables, then fsspec's [trinity]
    config). Never a silent fallback: a version pin (the `version` keyword, which fsspec
    passes from its config, $TRINITYFS_VERSION) is refused, since paths choose versions
    (/v/<selector>/...), and an unknown keyword is a TypeError naming it. `anon` (what
    pandas adds when it retries an open that raised PermissionError) is ignored: the
    store's access is chosen by `storage_options` only."""
    from trinityfs.fs.errors import InvalidRequest

    pin = extra.pop("version", None)
    # pandas adds anon=True when it retries an open that raised PermissionError (for
    # public buckets): accepted and ignored, so the retry fails as the first open did and
    # that error reaches the user (anonymous store access is storage_options={"anon": true})
    extra.pop("anon", None)
    if extra:
        names = ", ".join(repr(k) for k in sorted(extra))
        raise TypeError(
            f"TrinityFileSystem got unknown option(s) {names}; its options are {', '.join(OPTIONS)}"
        )
    if pin is not None and pin != "":
        raise InvalidRequest(
            f"TrinityFileSystem has no version option (version={pin!r}): the filesystem "
            f"chooses versions per path; read /v/{pin}/... instead"
        )
    config = read_config(
        root, storage_options, max_staleness_seconds=max_staleness_seconds, verify=verify
    )
    if config.version is not None:
        source = config.sources.get("version", "")
        where = "$TRINITYFS_VERSION" if source == "the environment" else source
        raise InvalidRequest(
            f"{where} pins catalog version {config.version!r}; the trinity:// filesystem "
            f"chooses versions per path: read /v/{config.version}/... (and unset the pin)"
        )
    return config


def latest_path(namespace: str | None = None, name: str | None = None) -> str:
    """The writable path of a namespace or object (`/v/latest/v/...` for namespace "v")."""
    if namespace is None:
        return "/"
    prefix = f"/{VERSIONS_DIR}/{LATEST}" if namespace == VERSIONS_DIR else ""
    tail = f"/{encode_name(name)}" if name is not None else ""
    return f"{prefix}/{encode_name(namespace)}{tail}"


def _millis_to_datetime(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, UTC)


class _Target:
    """A resolved path: the parsed path and its `Place` in the path model (None for /v),
    with the place's reader, version and export unpacked (read in hot loops)."""

    __slots__ = ("export", "p", "place", "reader", "version")

    def __init__(self, p: TrinityPath, place: Place | None):
        self.p = p
        self.place = place
        self.reader: Any = None if place is None else place.reader
        self.version: int | None = None if place is None else place.version
        self.export: str | None = None if place is None else place.export


__all__ = [
    "CATALOG_CACHE",
    "DEFAULT_ROOT",
    "LISTING_CACHE_ENTRIES",
    "NAMESPACE_PAGE",
    "OPTIONS",
    "ROOT_ENV",
    "SIZE_THREADS",
    "SNAPSHOT_CACHE",
    "TWO_LEVELS",
    "default_root",
    "filesystem_config",
    "latest_path",
    "resolve_root",
]
