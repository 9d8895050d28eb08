"""Reclaim table files no kept catalog version references (opt-in, dry run first).

`purge_table` only drops a table from the catalog: older catalog versions (time travel,
exports, rollback targets) still point at its files. Once those versions are expired,
the files are unreachable; this finds and (when asked) deletes them.

What is scanned: only the catalog's warehouse (never the extra `allowed-locations`
prefixes, which may be shared with other systems), only files in an Iceberg table
layout (a `metadata/` or `data/` path segment), never the lakehouse's own files (when
the warehouse contains the lakehouse root, that subtree is skipped), and only files
older than a grace period (a running job's files are not yet committed).

What counts as referenced: for every kept catalog version (oldest readable .. latest,
plus every export), every Iceberg table's current and previous metadata file, the
metadata log, statistics files, every snapshot's manifest list, manifests, and the data
and delete files those list. If any of that cannot be read, nothing is deleted.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyiceberg.exceptions import NoSuchIcebergTableError

from trinityfs.catalog.locations import canonical
from trinityfs.errors import (
    InvalidArgumentError,
    LocationNotAllowedError,
    ReclaimRefusedError,
    TrinityError,
)

if TYPE_CHECKING:
    from trinityfs.iceberg.catalog import TrinityCatalog

log = logging.getLogger(__name__)

DEFAULT_GRACE_SECONDS = 3 * 24 * 3600.0
_TABLE_SEGMENTS = {"metadata", "data"}


@dataclass
class ReclaimReport:
    """What a reclaim found (dry run) or deleted."""

    dry_run: bool
    versions_scanned: int = 0
    metadata_files_read: int = 0
    referenced_files: int = 0
    files_scanned: int = 0
    unreferenced: list[str] = field(default_factory=list)  # deleted unless dry_run
    kept_too_young: int = 0
    deleted: int = 0
    problems: list[str] = field(default_factory=list)  # unreadable metadata: no deletion


def _kept_snapshots(catalog: TrinityCatalog) -> Iterator[Any]:
    lake = catalog.lakehouse
    for version in range(lake.oldest_version(), lake.latest_version() + 1):
        yield lake.at(version)
    for export in lake.exports():
        yield lake.at(export=export.name)


def _metadata_locations(catalog: TrinityCatalog) -> tuple[int, set[str]]:
    from trinityfs.iceberg.pointer import METADATA_LOCATION, PREVIOUS_METADATA_LOCATION

    versions = 0
    seen_defs: set[str] = set()
    locations: set[str] = set()
    for snap in _kept_snapshots(catalog):
        versions += 1
        for ref, def_location in snap.iter_all():
            if ref.kind != "table" or def_location in seen_defs:
                continue
            seen_defs.add(def_location)
            tdef = snap.read_definition(ref, def_location)
            for key in (METADATA_LOCATION, PREVIOUS_METADATA_LOCATION):
                if tdef.format_properties.get(key):
                    locations.add(tdef.format_properties[key])
    return versions, locations


def referenced_files(catalog: TrinityCatalog, report: ReclaimReport) -> set[str]:
    """Canonical paths of every file a kept catalog version references (see module doc)."""
    versions, metadata_locations = _metadata_locations(catalog)
    report.versions_scanned = versions
    refs: set[str] = set()
    manifests_seen: set[str] = set()
    for location in sorted(metadata_locations):
        refs.add(location)
        if not catalog._policy.allows(location):
            continue  # never read (nor reclaimed): outside the allowed locations
        try:
            metadata = catalog._read_metadata("(reclaim)", location)
        except LocationNotAllowedError:
            continue  # its table points outside: nothing of it is ours to reclaim
        except (TrinityError, NoSuchIcebergTableError) as exc:
            report.problems.append(str(exc))
            continue
        report.metadata_files_read += 1
        io = catalog._load_file_io(metadata.properties, location)
        refs.update(entry.metadata_file for entry in metadata.metadata_log)
        refs.update(s.statistics_path for s in metadata.statistics)
        refs.update(s.statistics_path for s in metadata.partition_statistics)
        for snapshot in metadata.snapshots:
            refs.add(snapshot.manifest_list)
            for manifest in snapshot.manifests(io):
                refs.add(manifest.manifest_path)
                if manifest.manifest_path in manifests_seen:
                    continue
                manifests_seen.add(manifest.manifest_path)
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                    refs.add(entry.data_file.file_path)
    out = set()
    for ref in refs:
        with contextlib.suppress(InvalidArgumentError):
            out.add(str(canonical(ref)))
    report.referenced_files = len(out)
    return out


def _mtime(info: dict[str, Any]) -> float | None:
    for key in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return None


def reclaim_files(
    catalog: TrinityCatalog, *, dry_run: bool = True, older_than_seconds: float | None = None
) -> ReclaimReport:
    import fsspec

    grace = DEFAULT_GRACE_SECONDS if older_than_seconds is None else float(older_than_seconds)
    report = ReclaimReport(dry_run=dry_run)
    refs = referenced_files(catalog, report)
    warehouse = catalog.properties["warehouse"]
    wh = canonical(warehouse)
    root = canonical(catalog.lakehouse.url)
    fs, base = fsspec.core.url_to_fs(warehouse, **(catalog.storage_options or {}))
    if not fs.exists(base):
        return report
    now = time.time()
    base = base.rstrip("/")
    for path, info in sorted(fs.find(base, detail=True).items()):
        report.files_scanned += 1
        rel = path[len(base) :].lstrip("/")
        url = warehouse.rstrip("/") + "/" + rel
        loc = canonical(url)
        if wh.contains(root) and root.contains(loc):
            continue  # the lakehouse's own files, when the warehouse holds the root
        if not _TABLE_SEGMENTS.intersection(rel.split("/")[:-1]):
            continue
        if str(loc) in refs:
            continue
        mtime = _mtime(info)
        if grace > 0 and (mtime is None or now - mtime < grace):
            report.kept_too_young += 1
            continue
        report.unreferenced.append(url)
    if dry_run:
        return report
    if report.problems:
        raise ReclaimRefusedError(
            f"nothing deleted: {len(report.problems)} metadata file(s) of kept catalog "
            f"versions could not be read, so what they reference is unknown: "
            f"{report.problems[0]}"
        )
    io = catalog._load_file_io(location=warehouse)
    for url in report.unreferenced:
        try:
            io.delete(url)
            report.deleted += 1
        except FileNotFoundError:
            pass
    return report


__all__ = ["DEFAULT_GRACE_SECONDS", "ReclaimReport", "reclaim_files", "referenced_files"]
