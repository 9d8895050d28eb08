"""A read-only view of one committed version of the tree."""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from trinityfs.format.keys import KEY_CREATED_AT_MILLIS
from trinityfs.format.trinitylake_pb2 import LakehouseDef
from trinityfs.tree import Node, NodeStore, lookup, scan
from trinityfs.tree.reader import prefix_range, prefix_upper_bound, scan_list, spliced


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


class PrefixScan(Protocol):
    def scan_prefix(
        self, prefix: str, after: str | None = None, limit: int | None = None
    ) -> list[tuple[str, str]]: ...


_first = operator.itemgetter(0)


def scan_overlaid(
    base: PrefixScan,
    prefix: str,
    after: str | None,
    limit: int | None,
    changes: Sequence[tuple[str, str | None]],
) -> list[tuple[str, str]]:
    """`base.scan_prefix(prefix, after, limit)` with `changes` laid over it: `changes`
    are (key, location or None to delete) by key, each starting with `prefix` and after
    `after` (a transaction's pending writes in the range; only the items a page needs
    are read from it).

    With a `limit`, `base` is read a page at a time from the last key read, never the
    whole range: a page of `limit` pairs costs about `limit` + the deletions it meets
    base pairs (pages grow geometrically while deletions keep emptying them), so paging
    a range is linear in its size, not quadratic.
    """
    if limit is None:
        return spliced(base.scan_prefix(prefix, after, None), changes[:])
    out: list[tuple[str, str]] = []
    done = 0  # changes[:done] are laid over the pages read so far
    cursor = after
    chunk = 0
    while len(out) < limit:
        room = limit - len(out)
        if chunk == 0:  # first page: room for the deletions ahead that may hide pairs
            deletions = sum(1 for _, value in changes[:room] if value is None)
            chunk = room + deletions
        else:  # deletions emptied the last page: read more at once
            chunk = max(room, 2 * chunk)
        page = base.scan_prefix(prefix, cursor, chunk)
        if len(page) < chunk:  # the range ends in this page: every change left applies
            upto = bisect_right(changes, page[-1][0], done, key=_first) if page else done
            out.extend(spliced(page, changes[done:upto])[:room])
            while len(out) < limit and upto < len(changes):  # past the base: sets only
                key, value = changes[upto]
                upto += 1
                if value is not None:
                    out.append((key, value))
            break
        last = page[-1][0]
        upto = bisect_right(changes, last, done, key=_first)
        out.extend(spliced(page, changes[done:upto])[:room])
        done, cursor = upto, last
    return out
