"""Where a TrinityCatalog's tables may keep files, and reading their metadata safely.

Every FileIO the catalog hands out is confined to the allowed locations (the warehouse
plus `allowed-locations`, trinityfs/catalog/locations.py); metadata is read only after
its location is checked, and errors about it never quote the file's content.
"""

from __future__ import annotations

from pyiceberg.exceptions import NoSuchIcebergTableError
from pyiceberg.io import FileIO
from pyiceberg.serializers import FromInputFile
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import EMPTY_DICT, Properties

from trinityfs.catalog import LocationPolicy
from trinityfs.errors import (
    InvalidArgumentError,
    LocationNotAllowedError,
    StorageFileNotFoundError,
)
from trinityfs.iceberg.io import confined_file_io


def default_location_segment(name: str, kind: str) -> str:
    """`name` when it can be one directory of a default table location (<warehouse>/<ns>/
    <table>), else InvalidArgumentError: '.' and '..' would name the namespace's or the
    warehouse's directory and a slash another table's (`a/b` inside table `a`'s files).
    The one rule of TrinityCatalog, the Spark source and the REST server."""
    if name in (".", "..") or "/" in name or "\\" in name:
        raise InvalidArgumentError(
            f"{kind} name {name!r} cannot be used as a directory of the default table "
            "location (it is '.', '..' or contains a slash); give an explicit location "
            "inside the warehouse"
        )
    return name


class TableFilesMixin:
    """Location checks and confined file access of TrinityCatalog."""

    properties: Properties
    _policy: LocationPolicy

    def _load_file_io(
        self, properties: Properties = EMPTY_DICT, location: str | None = None
    ) -> FileIO:
        """PyIceberg's FileIO for a table, confined to the allowed locations."""
        return confined_file_io({**self.properties, **properties}, location)

    def check_location(self, location: str, what: str) -> str:
        """`location` when it lies in the lakehouse's allowed locations (its warehouse and
        `allowed-locations`) and holds no `?` or `#` (the catalog's policy), else
        LocationNotAllowedError naming it."""
        return self._policy.check(location, what)

    def _check_table_locations(self, ident: str, metadata: TableMetadata) -> None:
        """The table's own location and its write paths must be allowed too: data and
        metadata files of later commits go there."""
        from pyiceberg.table import TableProperties

        self.check_location(metadata.location, f"table {ident}: location")
        for prop in (
            TableProperties.WRITE_DATA_PATH,
            TableProperties.WRITE_METADATA_PATH,
            "write.object-storage.path",
            "write.folder-storage.path",
        ):
            if metadata.properties.get(prop):
                self.check_location(metadata.properties[prop], f"table {ident}: {prop}")

    def _read_metadata(self, ident: str, location: str) -> TableMetadata:
        """The Iceberg metadata at `location`, checked first; typed errors that never quote
        the file's content."""
        self.check_location(location, f"table {ident}: metadata location")
        io = self._load_file_io(location=location)
        try:
            metadata = FromInputFile.table_metadata(io.new_input(location))
        except LocationNotAllowedError:
            raise
        except FileNotFoundError:
            raise StorageFileNotFoundError(
                location,
                f"table {ident}: its Iceberg metadata file {location!r} is missing",
            ) from None
        except Exception as exc:
            raise NoSuchIcebergTableError(
                f"table {ident}: {location!r} is not readable Iceberg table metadata "
                f"({type(exc).__name__})"
            ) from None
        self._check_table_locations(ident, metadata)
        return metadata


__all__ = ["TableFilesMixin", "default_location_segment"]
