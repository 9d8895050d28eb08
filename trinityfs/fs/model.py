"""Catalog semantics of the shared path model, written once for trinity:// and the mount.

`trinityfs.fs.paths` parses a path; this module decides what it means where the two front
ends used to decide differently (issue 12):

- which version a `/v/<label>` path reads: `latest`, then digits, then an export of
  that name, then an ISO-8601 time (`select_label`);
- what `/v` lists: `<oldest>`..`<latest>`, `latest`, then every export whose name is not
  itself a version selector (an export named `3` or `latest` is reachable through the
  catalog API only: `/v/3` is version 3) (`versions_dir_names`);
- renaming a namespace keeps its id, its properties and its objects' ids
  (`move_namespace`).

When the catalog layer's primitives land (`Lakehouse.resolve`, `CatalogTransaction.
move_namespace`), each function here becomes that one call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Protocol

from trinityfs.fs.paths import LATEST

LabelKind = Literal["export", "time"]


class NamespaceMover(Protocol):
    """The catalog transaction calls `move_namespace` needs."""

    def describe_namespace(self, namespace: str): ...
    def namespace_exists(self, namespace: str) -> bool: ...
    def create_namespace(self, namespace: str, properties=None, exist_ok: bool = False): ...
    def replace_namespace(self, namespace: str, definition): ...
    def list_objects(self, namespace: str): ...
    def rename(self, kind: str, namespace: str, name: str, new_ns: str, new_name: str): ...
    def drop_namespace(self, namespace: str, cascade: bool = False): ...


def is_version_selector(name: str) -> bool:
    """Whether `/v/<name>` means a version whatever exports exist (`latest`, digits)."""
    return name == LATEST or (name.isascii() and name.isdigit())


def select_label(text: str, millis: int | None, export_names: Iterable[str]) -> LabelKind | None:
    """What `/v/<text>` reads when `text` is neither `latest` nor digits: an export of
    that name first, else a time (when it parses as one), else nothing (None)."""
    if text in set(export_names):
        return "export"
    if millis is not None:
        return "time"
    return None


def versions_dir_names(oldest: int, latest: int, export_names: Iterable[str]) -> list[str]:
    """The names `/v` lists, in order: versions oldest first, `latest`, exports."""
    names = [str(v) for v in range(oldest, latest + 1)]
    names.append(LATEST)
    names.extend(sorted(n for n in set(export_names) if not is_version_selector(n)))
    return names


def move_namespace(txn: NamespaceMover, old: str, new: str) -> None:
    """Rename namespace `old` to `new` (which must not exist) inside `txn`: the new
    namespace gets the old one's id and properties, every table and view is renamed
    into it keeping its id, and `old` is dropped."""
    if old == new:
        return
    definition = txn.describe_namespace(old)
    txn.create_namespace(new)
    txn.replace_namespace(new, {"id": definition.id, "properties": dict(definition.properties)})
    for ref in list(txn.list_objects(old)):
        txn.rename(ref.kind, old, ref.name, new, ref.name)
    txn.drop_namespace(old)


__all__ = [
    "is_version_selector",
    "move_namespace",
    "select_label",
    "versions_dir_names",
]
