"""Plain values the catalog API returns: object references, changes, versions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trinityfs.format.keys import KEY_LAKEHOUSE_DEF

Kind = Literal["namespace", "table", "view"]
OBJECT_KINDS: tuple[Kind, ...] = ("table", "view")
# The key of the lakehouse definition's row, which a commit conflict may name: front ends
# take it from here rather than from the format layer.
LAKEHOUSE_DEF_KEY = KEY_LAKEHOUSE_DEF


@dataclass(frozen=True, order=True)
class ObjectRef:
    """A namespace (name None) or a table or view of a namespace."""

    namespace: str
    name: str | None
    kind: Kind

    def __str__(self) -> str:
        return self.namespace if self.name is None else f"{self.namespace}.{self.name}"


@dataclass(frozen=True)
class Change:
    """One object created, replaced or dropped between two versions."""

    action: Literal["created", "replaced", "dropped"]
    object: ObjectRef


@dataclass(frozen=True)
class VersionInfo:
    """A committed version and when it was committed."""

    version: int
    created_at_millis: int
    rollback_from: int | None = None
