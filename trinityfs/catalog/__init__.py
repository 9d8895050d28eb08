"""The catalog API: the one entry point for the filesystem, CLI, FUSE mount, Iceberg,
Spark and REST front ends (they import nothing below it)."""

from trinityfs.catalog.config import LakehouseConfig, read_config
from trinityfs.catalog.content import Content, ContentError, RenderCache
from trinityfs.catalog.freshness import Freshness
from trinityfs.catalog.lakehouse import CatalogSnapshot, Lakehouse
from trinityfs.catalog.locations import LocationPolicy, is_inside_warehouse
from trinityfs.catalog.model import Change, ObjectRef, VersionInfo
from trinityfs.catalog.primitives import SelectorEntry
from trinityfs.catalog.selector import Selection, export_selector, parse_selector
from trinityfs.catalog.writer import CatalogTransaction, PutResult

__all__ = [
    "CatalogSnapshot",
    "CatalogTransaction",
    "Change",
    "Content",
    "ContentError",
    "Freshness",
    "Lakehouse",
    "LakehouseConfig",
    "LocationPolicy",
    "ObjectRef",
    "PutResult",
    "RenderCache",
    "Selection",
    "SelectorEntry",
    "VersionInfo",
    "export_selector",
    "is_inside_warehouse",
    "parse_selector",
    "read_config",
]
