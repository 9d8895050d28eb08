"""trinityfs: a serverless TrinityLake lakehouse catalog, presented as a filesystem."""

from trinityfs.catalog import CatalogSnapshot, CatalogTransaction, Lakehouse
from trinityfs.errors import TrinityError

__all__ = ["CatalogSnapshot", "CatalogTransaction", "Lakehouse", "TrinityError"]
__version__ = "0.1.0"
