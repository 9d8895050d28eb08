"""Version lifecycle: snapshot exports, expiration and garbage collection, distributed
transactions, fsck (FORMAT.md section 6).

The transaction layer's neighbour: it uses storage, tree and txn, never the catalog or a
front end. The catalog exposes it through `Lakehouse` (export, exports, drop_export,
at(export=...), expire, begin_distributed, load_distributed, fsck).
"""

from trinityfs.lifecycle.dtxn import DistributedTxn
from trinityfs.lifecycle.expire import ExpireReport, RetentionPolicy, expire
from trinityfs.lifecycle.exports import (
    DroppedExport,
    ExportInfo,
    ExportProgress,
    create_export,
    drop_export,
    list_exports,
    open_export,
)
from trinityfs.lifecycle.fsck import FsckProblem, FsckReport, fsck
from trinityfs.lifecycle.inventory import Inventory, StoredFile

__all__ = [
    "DistributedTxn",
    "DroppedExport",
    "ExpireReport",
    "ExportInfo",
    "ExportProgress",
    "FsckProblem",
    "FsckReport",
    "Inventory",
    "RetentionPolicy",
    "StoredFile",
    "create_export",
    "drop_export",
    "expire",
    "fsck",
    "list_exports",
    "open_export",
]
