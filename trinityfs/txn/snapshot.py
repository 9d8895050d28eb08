"""A read-only view of one committed version of the tree."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trinityfs.format.keys import KEY_CREATED_AT_MILLIS
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.tree import Node, NodeStore, lookup, scan
from trinityfs.tree.reader import prefix_range, prefix_upper_bound, scan_list


@dataclass
class Snapshot:
    """The tree as of `version` (or of an export, or a transaction's running root)."""

    version: int
    root: Node
    lakehouse_def: LakehouseDef
    lakehouse_def_location: str
    nodes: NodeStore

    @property
    def created_at_millis(self) -> int:
        return int(self.root.system.get(KEY_CREATED_AT_MILLIS, "0"))

    def get(self, key: str) -> str | None:
        """The definition location stored under `key`, or None."""
        return lookup(self.nodes, self.root, key)

    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]:
        """Pairs whose key starts with `prefix`, after key `after`, at most `limit`."""
        return scan_list(self.nodes, self.root, *prefix_range(prefix, after), limit)

    def items(self) -> Iterator[tuple[str, str]]:
        """Every (key, location) of the version, in key order."""
        return scan(self.nodes, self.root)

    def own_changes(self) -> dict[str, str | None]:
        """The messages this version's own commit wrote (kept in its root)."""
        return {k: v for k, (v, txn) in self.root.buffer.items() if txn == self.version}


def range_of_prefix(prefix: str) -> tuple[str, str | None]:
    return prefix, prefix_upper_bound(prefix)
