"""PyIceberg over TrinityLake: Iceberg tables whose catalog is a TrinityLake lakehouse.

    from pyiceberg.catalog import load_catalog

    catalog = load_catalog(
        "lake",
        **{"py-catalog-impl": "trinityfs.iceberg.TrinityCatalog", "root": "./demo-lake"},
    )

Needs the `iceberg` extra (`pip install 'trinityfs[iceberg]'`). See the README, "Data pipelines".
"""

from trinityfs.iceberg.catalog import (
    ICEBERG,
    METADATA_LOCATION,
    PREVIOUS_METADATA_LOCATION,
    MultiTableTransaction,
    TrinityCatalog,
    UnsupportedIdentifierError,
)
from trinityfs.iceberg.schema import from_tabledef_schema, to_tabledef_schema

__all__ = [
    "ICEBERG",
    "METADATA_LOCATION",
    "PREVIOUS_METADATA_LOCATION",
    "MultiTableTransaction",
    "TrinityCatalog",
    "UnsupportedIdentifierError",
    "from_tabledef_schema",
    "to_tabledef_schema",
]
