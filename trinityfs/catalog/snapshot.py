"""A read-only view of one version of the catalog (`Lakehouse.at`, `snapshot`, `view`)."""

from __future__ import annotations

import math
from typing import Any

from trinityfs.catalog.expired import ExpiryAwareView, OldestVersion
from trinityfs.catalog.reader import CatalogReader, KeyValueView
from trinityfs.catalog.selector import Selection
from trinityfs.catalog.writer import CatalogTransaction
from trinityfs.errors import ReadOnlyError
from trinityfs.storage import Storage
from trinityfs.txn.snapshot import Snapshot


class CatalogSnapshot(CatalogReader):
    """A read-only view of one version; every write method raises ReadOnlyError."""

    def __init__(
        self, snapshot: Snapshot, storage: Storage, oldest_version: OldestVersion | None = None
    ):
        """`oldest_version` (the catalog's, read now): a missing file is then reported
        as the version having expired when it has (catalog/expired.py)."""
        view: KeyValueView = snapshot
        read = storage.read_immutable
        if oldest_version is not None:
            aware = ExpiryAwareView(snapshot, snapshot.version, oldest_version)
            view, read = aware, aware.read_file(read)
        super().__init__(view, read, snapshot.version)
        self.snapshot = snapshot
        self.storage_url = storage.url
        self.selection: Selection | None = None  # set by Lakehouse.view()
        # when the oldest marker last said this version is readable (Lakehouse.check_readable)
        self.readable_checked_at = -math.inf

    @property
    def created_at_millis(self) -> int:
        return self.snapshot.created_at_millis

    def __getattr__(self, name: str) -> Any:
        if hasattr(CatalogTransaction, name) and not name.startswith("_"):
            raise ReadOnlyError(f"version {self.version} is read-only ({name} needs the latest)")
        raise AttributeError(name)


__all__ = ["CatalogSnapshot"]
