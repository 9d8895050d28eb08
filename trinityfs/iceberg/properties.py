"""The properties of a TrinityCatalog that choose the lakehouse and its version.

`root`, `storage-options`, `version` go through the catalog's one configuration reader
(`trinityfs.catalog.read_config`); `timestamp` becomes a `time:` selector, so every pin
is resolved by `Lakehouse.resolve`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

ROOT = "root"
VERSION = "version"
TIMESTAMP = "timestamp"
CREATE = "create"
DEFAULT_WAREHOUSE_DIR = "warehouse"


def truthy(value: Any) -> bool:
    """A boolean property: "true", "1", "yes", "on" (any case)."""
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def parse_timestamp(value: Any) -> datetime | int:
    """A `timestamp` option: epoch milliseconds, or ISO 8601 (UTC when no zone given)."""
    if isinstance(value, datetime | int):
        return value
    text = str(value).strip()
    digits = text.removeprefix("-")
    if digits.isascii() and digits.isdigit() and len(digits) <= 20:
        return int(text)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"timestamp {value!r} is neither epoch milliseconds nor ISO 8601"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def time_selector(value: Any) -> str:
    """The `time:` selector (trinityfs.catalog.selector) of a `timestamp` option."""
    when = parse_timestamp(value)
    if isinstance(when, int):
        try:
            when = datetime.fromtimestamp(when / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"timestamp {value!r} is out of range for a date") from None
    return "time:" + when.isoformat(timespec="milliseconds")


__all__ = [
    "CREATE",
    "DEFAULT_WAREHOUSE_DIR",
    "ROOT",
    "TIMESTAMP",
    "VERSION",
    "parse_timestamp",
    "time_selector",
    "truthy",
]
