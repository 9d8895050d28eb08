"""When an object last changed, and when it was created: bisection over versions.

Both answers are the first version of a run of versions, found with O(log versions)
point lookups (each a root load plus one tree descent) instead of a walk.

Why bisection is valid for `last_changed` (and not for arbitrary predicates): a version
holds a definition *location* per key, and every write of a definition (create, replace,
rename, property update) stores a new file at a fresh, never reused location
(`new_definition_location`: kind, names and a random UUID). So once a key stops pointing
at location L, no later commit can make it point at L again, except a rollback, which
restores an older tree and with it older locations. Without such a rollback, the versions
in [oldest, at] whose key holds L are one contiguous run ending at `at`: the predicate
"key holds L at v" is false, ..., false, true, ..., true, so bisection finds the run's
first version, the commit that wrote L: when the current definition took effect.

A rollback that restored L after it had been replaced splits L's versions into several
runs; bisection then still returns the first version of one of them (the version that
wrote L, or the rollback that restored it): always a version at which this very
definition took effect, never one at which the object held anything else.

`created` bisects on "the key holds a definition with the current object's id": replaces
keep the id, a drop and re-create makes a new one, so the run starts at the object's
latest creation under this name (a rename or namespace move creates the new name).
"""

from __future__ import annotations

from typing import Protocol

from trinityfs.catalog.model import Kind
from trinityfs.errors import NamespaceNotFoundError, ObjectNotFoundError, VersionNotFoundError
from trinityfs.format.definitions import decode_definition
from trinityfs.format.keys import KeyCodec
from trinityfs.format.trinitylake_pb2 import NamespaceDef, TableDef, ViewDef
from trinityfs.lifecycle.stamps import first_holding
from trinityfs.lru import LRU

_TYPES = {"namespace": NamespaceDef, "table": TableDef, "view": ViewDef}


class VersionedKeys(Protocol):
    """What bisection needs of a lakehouse: a key's location at a version."""

    def location_at(self, version: int, key: str) -> str | None: ...

    def read_file(self, location: str) -> bytes: ...


class History:
    """last_changed / created for one lakehouse, caching definition ids by location."""

    def __init__(self, source: VersionedKeys, ids: int = 4096):
        self._source = source
        self._ids: LRU[str, str] = LRU(ids)

    def _safe_location(self, version: int, key: str) -> str | None:
        try:
            return self._source.location_at(version, key)
        except VersionNotFoundError:  # expired meanwhile: older than anything we look for
            return None

    def _id(self, kind: Kind, location: str) -> str:
        def load() -> str:
            data = self._source.read_file(location)
            return decode_definition(data, _TYPES[kind], location).id

        return self._ids.get_or_load(location, load)

    def key_and_location(
        self, keys: KeyCodec, at: int, namespace: str, name: str | None
    ) -> tuple[Kind, str, str]:
        """(kind, key, location) of a namespace or object at version `at`."""
        if name is None:
            key = keys.namespace_key(namespace)
            location = self._source.location_at(at, key)
            if location is None:
                raise NamespaceNotFoundError(
                    f"namespace {namespace!r} does not exist at version {at}"
                )
            return "namespace", key, location
        for kind, key in keys.object_keys(namespace, name).items():
            location = self._source.location_at(at, key)
            if location is not None:
                return kind, key, location
        if self._source.location_at(at, keys.namespace_key(namespace)) is None:
            raise NamespaceNotFoundError(f"namespace {namespace!r} does not exist at version {at}")
        raise ObjectNotFoundError(f"no table or view {namespace}.{name} at version {at}")

    def last_changed(self, key: str, location: str, oldest: int, at: int) -> int:
        """The version that made `key` point at `location` (see the module docstring)."""
        return first_holding(
            oldest, at, lambda v: self._safe_location(v, key) == location, holds_at_hi=True
        )

    def created(self, kind: Kind, key: str, location: str, oldest: int, at: int) -> int:
        """The version of the latest creation of the object `key` holds at `at`."""
        object_id = self._id(kind, location)

        def same_object(v: int) -> bool:
            here = self._safe_location(v, key)
            if here is None:
                return False
            return here == location or self._id(kind, here) == object_id

        if not object_id:  # no id to follow (another writer's definition): same file
            return self.last_changed(key, location, oldest, at)
        return first_holding(oldest, at, same_object, holds_at_hi=True)


__all__ = ["History", "VersionedKeys"]
