"""Reading a version that expiration may have removed: say so, not "corrupt".

A read-only view of version v keeps its root (and a process keeps the node and
definition bytes it read or wrote), so after another process expired v a view made
earlier, or made now from those caches, still answers. Three rules keep the answer
honest:

- Opening a view of an old version checks the oldest readable version (one marker
  read) unless the version is too young for any expiration to have removed it: its
  root was created less than half the commit window ago (expiration keeps every root
  created within its grace period, which is at least the commit window, plus a margin
  for clock skew), or it is at or above the latest version this process confirmed
  within that time.
- A root that is missing is expired, not yet committed, or lost (`load_root`).
- A file of the view that is missing is reported as the version having expired
  (VersionNotFoundError, "no such file" at the edges) when the oldest readable version
  is now above it; only otherwise is it a file the catalog points to that is gone
  (StorageFileNotFoundError, an I/O error at the edges: damage).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from trinityfs.catalog.reader import KeyValueView
from trinityfs.errors import (
    CorruptFileError,
    StorageFileNotFoundError,
    TrinityError,
    VersionNotFoundError,
)
from trinityfs.format.paths import check_version, root_node_file
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.tree import Node

#: the oldest readable version, read from storage now
OldestVersion = Callable[[], int]


def expired_error(version: int, oldest: int, *, while_reading: bool = False) -> Exception:
    """The error for a read of `version` when `oldest` is the oldest readable one."""
    when = " while it was being read" if while_reading else ""
    return VersionNotFoundError(
        f"version {version} was expired{when} (the oldest readable version is {oldest})"
    )


def check_not_expired(version: int, oldest_version: OldestVersion) -> None:
    """VersionNotFoundError when `version` is below the oldest readable version."""
    oldest = oldest_version()
    if version < oldest:
        raise expired_error(version, oldest)


class RootSource(Protocol):
    """What `load_root` needs of the root store."""

    def load(self, version: int) -> Node: ...

    def oldest_version(self) -> int: ...

    def latest_version(self) -> int: ...

    def forget(self, version: int) -> None: ...


#: waits (seconds, one after another) before a root missing between the oldest and the
#: latest version is called lost. Two expirations that overlap can leave the slower
#: one's lower marker for a moment while the faster one deletes the roots below its own
#: (there is no compare-and-swap on the marker: lifecycle/expire_overlap.py); once the
#: faster one deleted the root that lower marker names, the marker names no root and
#: the oldest version is found from the roots again. Bounded (1.5 s in all): a really
#: lost root is reported that much later.
LOST_ROOT_WAITS = (0.05, 0.1, 0.2, 0.4, 0.75)


def load_root(roots: RootSource, version: int) -> Node:
    """The root of `version`, a missing one explained: expired (below the oldest
    readable version), not yet committed (above the latest), or lost (between them:
    expiration moves the oldest marker before it deletes a root, so a kept version's
    root is never missing on a healthy lakehouse) - then CorruptFileError names it,
    after LOST_ROOT_WAITS found the oldest version still at or below it."""
    check_version(version)  # True or 1.0 would find version 1 in the root cache
    try:
        return roots.load(version)
    except VersionNotFoundError:
        if version < 0:
            raise
        oldest = roots.oldest_version()
        if version < oldest:
            raise expired_error(version, oldest) from None
        latest = roots.latest_version()
        if version > latest:
            raise VersionNotFoundError(
                f"version {version} does not exist (the latest version is {latest})"
            ) from None
    for wait in (0.0, *LOST_ROOT_WAITS):
        if wait:
            time.sleep(wait)
            roots.forget(version)  # the marker's root is looked at again, not trusted
            oldest = roots.oldest_version()
            if version < oldest:
                raise expired_error(version, oldest) from None
        try:
            return roots.load(version)  # committed since the first look
        except VersionNotFoundError:
            pass
    raise CorruptFileError(
        root_node_file(version),
        f"missing, although versions {oldest} to {latest} are kept: the root of a "
        "kept version was lost (run `trinityfs fsck`)",
        version,
    )


class ExpiryAwareView:
    """A version's key-value view whose missing files are explained (module doc)."""

    def __init__(self, view: KeyValueView, version: int, oldest_version: OldestVersion):
        self._view = view
        self._version = version
        self._oldest_version = oldest_version

    @property
    def lakehouse_def(self) -> LakehouseDef:
        return self._view.lakehouse_def

    def _explain(self, exc: StorageFileNotFoundError) -> Exception:
        try:
            oldest = self._oldest_version()
        except TrinityError:  # the marker cannot be read either: report the first problem
            return exc
        if self._version < oldest:
            return expired_error(self._version, oldest, while_reading=True)
        return exc

    def get(self, key: str) -> str | None:
        try:
            return self._view.get(key)
        except StorageFileNotFoundError as exc:
            raise self._explain(exc) from exc

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]:
        try:
            return self._view.scan_prefix(prefix, after, limit)
        except StorageFileNotFoundError as exc:
            raise self._explain(exc) from exc

    def read_file(self, read: Callable[[str], bytes]) -> Callable[[str], bytes]:
        """`read` (a definition file reader) with its missing files explained."""

        def read_explained(location: str) -> bytes:
            try:
                return read(location)
            except StorageFileNotFoundError as exc:
                raise self._explain(exc) from exc

        return read_explained


__all__ = [
    "ExpiryAwareView",
    "RootSource",
    "check_not_expired",
    "expired_error",
    "load_root",
]
