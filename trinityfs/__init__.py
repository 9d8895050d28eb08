"""trinityfs: a serverless TrinityLake lakehouse catalog, presented as a filesystem.

The names below load on first use (PEP 562), so `import trinityfs.<module>` does not pay
for pyarrow and the catalog it does not need (the `trinityfs` command starts with a cheap
import, which keeps Ctrl-C during start-up clean)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trinityfs.catalog import CatalogSnapshot, CatalogTransaction, Lakehouse
    from trinityfs.errors import TrinityError

__all__ = ["CatalogSnapshot", "CatalogTransaction", "Lakehouse", "TrinityError"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("CatalogSnapshot", "CatalogTransaction", "Lakehouse"):
        from trinityfs import catalog

        return getattr(catalog, name)
    if name == "TrinityError":
        from trinityfs.errors import TrinityError

        return TrinityError
    raise AttributeError(f"module 'trinityfs' has no attribute {name!r}")
