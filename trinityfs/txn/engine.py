"""The transaction engine of one lakehouse: open versions, begin and commit transactions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from trinityfs.format.definitions import buffer_budget_bytes
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF, KEY_ROLLBACK_FROM_ROOT
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.storage import Storage
from trinityfs.tree import Node, NodeStore
from trinityfs.txn.roots import RootStore
from trinityfs.txn.snapshot import Snapshot

if TYPE_CHECKING:
    from trinityfs.txn.verify import TreeVerifier


def now_millis() -> int:
    return time.time_ns() // 1_000_000


class Engine:
    """Shared state of every transaction on one lakehouse: storage, roots, node cache."""

    #: set for whole-tree verification of commits (`verify="tree"`, trinityfs.txn.verify)
    tree_verifier: TreeVerifier | None = None

    def __init__(self, storage: Storage):
        self.storage = storage
        self.roots = RootStore(storage)
        self._node_stores: dict[int, NodeStore] = {}

    def nodes(self, order: int) -> NodeStore:
        store = self._node_stores.get(order)
        if store is None:
            store = self._node_stores[order] = NodeStore(self.storage, order)
        return store

    def budget(self, ldef: LakehouseDef) -> int:
        return buffer_budget_bytes(ldef)

    def snapshot_of_root(self, version: int, root: Node) -> Snapshot:
        location, ldef = self.roots.lakehouse_def(root)
        return Snapshot(version, root, ldef, location, self.nodes(ldef.order))

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The committed tree at `version` (latest when None)."""
        if version is None:
            version = self.roots.latest_version()
        return self.snapshot_of_root(version, self.roots.load(version))

    def changes(self, version: int) -> dict[str, str | None]:
        """Keys changed by `version` (None = deleted), the lakehouse_def row included."""
        after = self.snapshot(version)
        if version == 0:
            return dict(after.items())
        if KEY_ROLLBACK_FROM_ROOT not in after.root.system:
            changed = after.own_changes()
        else:
            diff = diff_snapshots(self.snapshot(version - 1), after)
            changed = {k: new for k, (_old, new) in diff.items()}
        before_def = self.roots.load(version - 1).system.get(KEY_LAKEHOUSE_DEF)
        if after.root.system.get(KEY_LAKEHOUSE_DEF) != before_def:
            changed[KEY_LAKEHOUSE_DEF] = after.root.system.get(KEY_LAKEHOUSE_DEF)
        return changed


def diff_snapshots(old: Snapshot, new: Snapshot) -> dict[str, tuple[str | None, str | None]]:
    """Keys whose location differs between two trees: key -> (old, new), None = absent."""
    out: dict[str, tuple[str | None, str | None]] = {}
    a, b = _pairs(old.items()), _pairs(new.items())
    ka, va = next(a)
    kb, vb = next(b)
    while ka is not None or kb is not None:
        if kb is None or (ka is not None and ka < kb):
            out[ka] = (va, None)
            ka, va = next(a)
        elif ka is None or kb < ka:
            out[kb] = (None, vb)
            kb, vb = next(b)
        else:
            if va != vb:
                out[kb] = (va, vb)
            ka, va = next(a)
            kb, vb = next(b)
    return out


def _pairs(it: Iterator[tuple[str, str]]) -> Iterator[tuple[str | None, str | None]]:
    yield from it
    while True:
        yield None, None
