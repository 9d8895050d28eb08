"""The catalog API: the one entry point for the filesystem, CLI, FUSE mount and Spark."""

from trinityfs.catalog.lakehouse import CatalogSnapshot, Lakehouse
from trinityfs.catalog.model import Change, ObjectRef, VersionInfo
from trinityfs.catalog.writer import CatalogTransaction

__all__ = [
    "CatalogSnapshot",
    "CatalogTransaction",
    "Change",
    "Lakehouse",
    "ObjectRef",
    "VersionInfo",
]
