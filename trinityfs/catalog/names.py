"""The catalog's policy for names it creates (stricter than what it reads).

FORMAT.md section 3 says which names are valid; every valid name is read, listed and
found. It does not oblige a writer to create every valid name (FORMAT.md itself records
that trinityfs refuses a table and a view sharing a name), so trinityfs refuses to
*create* (create, rename or move to) two kinds of valid names that cannot be used safely:

- ``.`` and ``..``: every path grammar (trinity://, the mount, the CLI, shells) reads
  them as "this" and "the parent" directory, so such an object could be neither opened
  nor removed by path;
- names not in Unicode NFC form: they look identical to their NFC spelling (``é`` as
  ``e`` + combining accent), so two objects that print the same could coexist. The
  error names the NFC spelling to use. A name whose decomposed (NFD) spelling already
  exists (written by another implementation) is refused too, as a confusable twin.

Names another writer created are never refused on read: they stay reachable (the front
ends escape path-special characters; see docs/fuse.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any, Protocol

from trinityfs.errors import InvalidNameError

RESERVED_NAMES = frozenset({".", ".."})


def check_new_name(kind: str, name: str, exists: Callable[[str], bool] | None = None) -> None:
    """Refuse a name the catalog will not create; `exists(other)` tells whether another
    spelling of it is already taken (to refuse confusable twins)."""
    if name in RESERVED_NAMES:
        raise InvalidNameError(
            f"invalid {kind} name {name!r}: '.' and '..' are reserved (they mean this and "
            "the parent directory in paths)"
        )
    nfc = unicodedata.normalize("NFC", name)
    if nfc != name:
        raise InvalidNameError(
            f"invalid {kind} name {name!r}: not in Unicode NFC form; it looks the same as "
            f"{nfc!r}, which is the spelling to use"
        )
    if exists is not None:
        nfd = unicodedata.normalize("NFD", name)
        if nfd != name and exists(nfd):
            raise InvalidNameError(
                f"invalid {kind} name {name!r}: a {kind} spelled {nfd!r} (the same name in "
                "Unicode NFD form) already exists"
            )


class _Lookup(Protocol):
    def object_location(self, kind: Any, namespace: str, name: str) -> str | None: ...


def check_new_object_name(reader: _Lookup, kind: str, namespace: str, name: str) -> None:
    """Refuse, before anything is written for it, a new table or view name the catalog
    will not create: the lakehouse's name rules (characters, length: NameTooLongError)
    as `reader` (a snapshot or transaction) applies them, then `check_new_name`. Front
    ends that write files for a name before the catalog commit (Iceberg metadata, Spark
    data files) call this first."""
    reader.object_location(kind, namespace, name)  # validates both names
    check_new_name(kind, name)


def check_export_lookup_name(name: object) -> None:
    """InvalidNameError for a name no export can have: not a str, empty, not UTF-8.
    (Names this library creates follow a stricter rule; another writer's may not.)"""
    if not isinstance(name, str) or not name:
        raise InvalidNameError(f"invalid export name {name!r}: must be a non-empty str")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidNameError(f"invalid export name {name!r}: is not valid UTF-8") from None


__all__ = [
    "RESERVED_NAMES",
    "check_export_lookup_name",
    "check_new_name",
    "check_new_object_name",
]
