"""What is stored under a lakehouse root: one listing, every file classified.

Expiration and fsck work from one listing of the root (one request on local disk, one
per page of 1,000 on S3) instead of probing names one by one. Each file is classified
by its exact name pattern (FORMAT.md section 1); an optimized path only counts as one of
ours when its hash prefix matches the name, so a stranger's file that happens to look
like `0101/.../x-node-1.arrow` is still "unknown". Unknown files (Iceberg data and
metadata under other prefixes, a README, ...) are never deleted, only reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from trinityfs.format.paths import (
    EXPORTS_DIR,
    LATEST_HINT,
    OLDEST_VERSION,
    optimized_path,
    parse_root_node_file,
)
from trinityfs.storage import FileEntry, Storage
from trinityfs.storage.base import PROBE_PREFIX, TEMP_PREFIX

# File kinds.
ROOT = "root"
NODE = "node"
DEFINITION = "definition"
LAKEHOUSE_DEF = "lakehouse_def"
TRANSACTION = "transaction"
EXPORT_ROOT = "export_root"
EXPORT_FILE = "export_file"  # anything below _exports/<name>/
MARKER = "marker"  # _latest_hint.txt, _oldest_version.txt
TEMPORARY = "temporary"  # an unfinished local write (.trinityfs-tmp-*)
PROBE = "probe"  # a conditional-write probe file left behind
UNKNOWN = "unknown"

# Kinds expiration may delete (when unreachable and old enough).
COLLECTABLE = frozenset(
    {ROOT, NODE, DEFINITION, LAKEHOUSE_DEF, TRANSACTION, EXPORT_ROOT, TEMPORARY, PROBE}
)

_OPTIMIZED_RE = re.compile(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}-(.+)")
_OPTIMIZED_DIR_RE = re.compile(r"(?:[01]{4}/[01]{4}/[01]{4}/)?")
_LAKEHOUSE_DEF_RE = re.compile(r"_lakehouse_def_[^/]+\.binpb")
_EXPORT_ROOT_RE = re.compile(r"_export_[^/]+\.arrow")
_DEFINITION_RE = re.compile(r"(?:namespace|table|view)-.+\.binpb")
_NODE_RE = re.compile(r"node-[^/]+\.arrow")
_TXN_RE = re.compile(r"txn-(.+)\.binpb")


def classify(location: str) -> str:
    """The kind of the file at `location` (relative to a lakehouse root)."""
    directory, _, name = location.rpartition("/")
    if not directory:
        if location in (LATEST_HINT, OLDEST_VERSION):
            return MARKER
        if parse_root_node_file(location) is not None:
            return ROOT
        if _LAKEHOUSE_DEF_RE.fullmatch(location):
            return LAKEHOUSE_DEF
        if _EXPORT_ROOT_RE.fullmatch(location):
            return EXPORT_ROOT
        if location.startswith(PROBE_PREFIX):
            return PROBE
    if location.startswith(EXPORTS_DIR + "/"):
        return EXPORT_FILE
    if name.startswith(TEMP_PREFIX) and _OPTIMIZED_DIR_RE.fullmatch(
        directory + "/" if directory else ""
    ):
        return TEMPORARY
    match = _OPTIMIZED_RE.fullmatch(location)
    if match is None:
        return UNKNOWN
    original = match.group(1)
    try:
        if optimized_path(original) != location:
            return UNKNOWN
    except Exception:
        return UNKNOWN
    if _NODE_RE.fullmatch(original):
        return NODE
    if _DEFINITION_RE.fullmatch(original):
        return DEFINITION
    if _TXN_RE.fullmatch(original):
        return TRANSACTION
    return UNKNOWN


def transaction_id_of(location: str) -> str | None:
    """The id of the distributed transaction file at `location`, else None."""
    match = _OPTIMIZED_RE.fullmatch(location)
    if match is None:
        return None
    txn = _TXN_RE.fullmatch(match.group(1))
    return txn.group(1) if txn else None


def export_dir_of(location: str) -> str | None:
    """`_exports/<name>` for a file below a full export's directory, else None."""
    parts = location.split("/", 2)
    if len(parts) == 3 and parts[0] == EXPORTS_DIR:
        return f"{parts[0]}/{parts[1]}"
    return None


@dataclass(frozen=True)
class StoredFile:
    """One file of the inventory, as reports show it."""

    location: str
    kind: str
    size: int
    mtime: float | None = None

    def to_dict(self) -> dict:
        return {"location": self.location, "kind": self.kind, "size": self.size}


@dataclass
class Inventory:
    """Every file under a root at listing time, by kind."""

    entries: dict[str, StoredFile] = field(default_factory=dict)

    @classmethod
    def scan(cls, storage: Storage, prefix: str = "") -> Inventory:
        """List the whole root (temporary files included) and classify each file."""
        return cls.of(storage.list(prefix, include_temporary=True))

    @classmethod
    def of(cls, entries: Iterable[FileEntry]) -> Inventory:
        inv = cls()
        for e in entries:
            inv.entries[e.location] = StoredFile(e.location, classify(e.location), e.size, e.mtime)
        return inv

    def of_kind(self, *kinds: str) -> list[StoredFile]:
        return [f for f in self.entries.values() if f.kind in kinds]

    def roots(self) -> dict[int, StoredFile]:
        """Root node files by version."""
        out: dict[int, StoredFile] = {}
        for f in self.of_kind(ROOT):
            version = parse_root_node_file(f.location)
            if version is not None:
                out[version] = f
        return out

    def export_dirs(self) -> dict[str, list[StoredFile]]:
        """Files of each `_exports/<name>` directory."""
        out: dict[str, list[StoredFile]] = {}
        for f in self.of_kind(EXPORT_FILE):
            directory = export_dir_of(f.location)
            if directory is not None:
                out.setdefault(directory, []).append(f)
        return out

    def __contains__(self, location: str) -> bool:
        return location in self.entries

    def __len__(self) -> int:
        return len(self.entries)
