"""Small multi-level lakehouses the integrity suites damage, shared by their tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from lake_fixtures import SMALL_TREE  # order 4, small node files: several levels deep
from lake_fixtures import flip as flip  # re-exported: the integrity tests' damage

from trinityfs import Lakehouse

NO_FSYNC = {"fsync": False}
OPEN = {"storage_options": NO_FSYNC}


def build_tables_lake(path: Path, tables: int) -> Path:
    """A lakehouse with namespace `ns` holding tables t000.. (one commit each)."""
    lake = Lakehouse.create(str(path), **OPEN, **SMALL_TREE)
    lake.create_namespace("ns")
    for i in range(tables):
        lake.create_table("ns", f"t{i:03d}", {"properties": {"n": str(i)}})
    return path


def copy_lake(pristine: Path, work: Path, **options) -> Lakehouse:
    """A handle on a fresh copy of `pristine` in `work`/lake; `.path` is its directory."""
    shutil.copytree(pristine, work / "lake")
    lake = Lakehouse.open(str(work / "lake"), **OPEN, **options)
    lake.path = work / "lake"  # the directory, for damaging files
    return lake


def node_files(lake: Lakehouse, version: int, stop_at: str | None = None) -> set[str]:
    """Every non-root node file the tree of `version` reaches (not below `stop_at`)."""
    snap = lake.engine.snapshot(version)
    nodes = lake.engine.nodes(snap.lakehouse_def.order)
    out: set[str] = set()
    todo = [c for c in snap.root.children or () if isinstance(c, str)]
    while todo:
        loc = todo.pop()
        out.add(loc)
        if loc != stop_at:
            todo.extend(c for c in nodes.load(loc).children or () if isinstance(c, str))
    return out


def stored_files(path: Path) -> dict[str, int]:
    """Every file under `path` with its size (to tell that nothing was written)."""
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}
