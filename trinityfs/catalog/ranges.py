"""Key ranges of a catalog version, for reading a large catalog in parallel.

`split_points` cuts the key space of a version into ranges of similar size from the
upper levels of the tree (it reads the root and at most its children, never the whole
tree); `scan_range` lists the namespaces, tables and views of one range in key order
(namespaces first, then tables, then views, each by namespace and name), with the
location of each definition for `CatalogReader.read_definition`. Ranges are half-open
on the left: (after, until].
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Iterator
from itertools import repeat
from typing import TYPE_CHECKING

from trinityfs.catalog.model import ObjectRef
from trinityfs.catalog.reader import PAGE_SIZE, CatalogReader
from trinityfs.format.keys import ObjectKey

if TYPE_CHECKING:
    from trinityfs.catalog.lakehouse import CatalogSnapshot

_KINDS = ("namespace", "table", "view")
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


def _key(reader: CatalogReader, ref: ObjectRef) -> str:
    return reader.keys.encode(ObjectKey(ref.kind, ref.namespace, ref.name))


def _ref(reader: CatalogReader, key: str) -> ObjectRef | None:
    try:
        ok = reader.keys.decode(key)
    except Exception:
        return None
    if ok.kind not in _KINDS:
        return None
    return ObjectRef(ok.namespace, ok.name, ok.kind)


def split_points(snapshot: CatalogSnapshot, max_splits: int) -> list[ObjectRef]:
    """At most `max_splits - 1` object refs, ascending, that cut `snapshot`'s objects into
    ranges of similar size. `snapshot` is a `CatalogSnapshot` (Lakehouse.at())."""
    if max_splits <= 1:
        return []
    tree = snapshot.snapshot
    root = tree.root
    keys = set(root.keys) | {k for k, (v, _) in root.buffer.items() if v is not None}
    if root.children and len(keys) < 4 * max_splits:
        for child in root.children:
            node = tree.nodes.resolve(child)
            keys.update(node.keys)
            keys.update(k for k, (v, _) in node.buffer.items() if v is not None)
    refs = [r for r in (_ref(snapshot, k) for k in sorted(keys)) if r is not None]
    if len(refs) < max_splits:
        return refs[:-1] if refs else []
    step = len(refs) / max_splits
    return [refs[int(step * i)] for i in range(1, max_splits)]


def scan_range(
    reader: CatalogReader, after: ObjectRef | None = None, until: ObjectRef | None = None
) -> Iterator[tuple[ObjectRef, str]]:
    """Objects whose key is after `after` and at most `until` (None: unbounded), with the
    location of their definition, in key order."""
    after_key = None if after is None else _key(reader, after)
    until_key = None if until is None else _key(reader, until)
    for kind in _KINDS:
        prefix = reader.keys.kind_prefix(kind)
        if until_key is not None and until_key < prefix:
            return
        start = after_key if after_key is not None and after_key >= prefix else None
        while True:
            page = reader._view.scan_prefix(prefix, start, PAGE_SIZE)
            keys = list(map(_first, page))
            stop = len(page) if until_key is None else bisect_right(keys, until_key)
            yield from _refs(reader, kind, keys[:stop], page[:stop])
            if stop < len(page):
                return
            if len(page) < PAGE_SIZE:
                break
            start = page[-1][0]


def _refs(
    reader: CatalogReader, kind: str, keys: list[str], page: list[tuple[str, str]]
) -> Iterator[tuple[ObjectRef, str]]:
    """(ref, location) of a page of keys of `kind`: decoded in bulk when every key is
    plain (`KeyCodec.bulk_decode`), else key by key, skipping what is not an object key."""
    columns = reader.keys.bulk_decode(kind, keys)
    if columns is not None:
        yield from zip(map(ObjectRef, *columns, repeat(kind)), map(_second, page), strict=True)
        return
    for key, location in page:
        ref = _ref(reader, key)
        if ref is not None:
            yield ref, location


__all__ = ["scan_range", "split_points"]
