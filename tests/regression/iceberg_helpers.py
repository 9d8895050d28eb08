"""Small builders shared by the Iceberg/Spark regression tests."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from trinityfs import Lakehouse


def make_lake(path: Path, namespace: str = "ns") -> str:
    """A fresh local lakehouse with one namespace; returns its root."""
    Lakehouse.create(str(path))
    Lakehouse.open(str(path)).create_namespace(namespace)
    return str(path)


def point_table_at(root: str, ns: str, name: str, metadata_location: str) -> None:
    """Write a table definition whose metadata_location is anything (as anyone with write
    access to the catalog can, e.g. through trinity:// or the CLI)."""
    definition = {
        "table_format": "ICEBERG",
        "format_properties": {"metadata_location": metadata_location},
    }
    lake = Lakehouse.open(root)
    if lake.snapshot().object_location("table", ns, name) is None:
        lake.create_table(ns, name, definition)
    else:
        lake.replace_table(ns, name, definition)


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": pa.array([f"r{i}" for i in range(start, start + n)], pa.string()),
        }
    )


def files_under(path: Path) -> set[str]:
    return {str(p) for p in path.rglob("*") if p.is_file()}
