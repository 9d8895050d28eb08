"""What the FUSE regression tests share: tests/fuse's mount helpers (`FUSE` marks every
module, `mounted` runs a real mount) and the small lakehouses their fixtures build."""

from __future__ import annotations

import os
import sys
from typing import Any

from trinityfs import Lakehouse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuse"))
from fuse_helpers import FUSE, SKIP_REASON, mounted


def one_table(path: str, definition: dict[str, Any]) -> str:
    """A lakehouse at `path` whose namespace `ns` holds table `t` (`definition`)."""
    lake = Lakehouse.create(path)
    lake.create_namespace("ns")
    lake.create_table("ns", "t", definition)
    return path


def sales_with_exports(path: str) -> str:
    """Versions 1 (namespace sales, tier gold), 2 (table sales.orders), 3 (view
    sales.big); then exports of version 2 named like a time ("2000-01-01", version 4) and
    like a version ("3", version 5)."""
    lake = Lakehouse.create(path)
    lake.create_namespace("sales", {"tier": "gold"})
    lake.create_table("sales", "orders", {"table_format": "ICEBERG"})
    lake.create_view("sales", "big", {})
    lake.export("2000-01-01", version=2)
    lake.export("3", version=2)
    return path


__all__ = ["FUSE", "SKIP_REASON", "mounted", "one_table", "sales_with_exports"]
