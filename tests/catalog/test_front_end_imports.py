"""Front ends use only the catalog API (issue 12, docs/ARCHITECTURE.md): none imports
format, tree, txn, storage or lifecycle, and a front end imports another only where
docs/ARCHITECTURE.md states it."""

from __future__ import annotations

import ast
import pathlib

import trinityfs

FRONT_ENDS = ("fs", "fuse", "cli", "iceberg", "spark", "rest")
LOWER = ("format", "tree", "txn", "storage", "lifecycle")
# (importer, imported): the stated front-end-on-front-end imports
STATED = {
    ("cli", "fs"),  # the shell commands drive the trinity:// filesystem
    ("cli", "fuse"),  # `trinityfs mount`
    ("cli", "rest"),  # `trinityfs serve` (its options; the server on demand)
    ("fuse", "fs"),  # the mount shares the filesystem's path model
    ("spark", "iceberg"),  # Spark reads and writes through TrinityCatalog
    ("rest", "iceberg"),  # the REST server serves TrinityCatalog
}
PACKAGE = pathlib.Path(trinityfs.__file__).parent


def _edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = {}
    for front in FRONT_ENDS:
        for path in sorted((PACKAGE / front).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and not node.level:
                    modules = [node.module or ""]
                elif isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                else:
                    continue
                for module in modules:
                    parts = module.split(".")
                    if parts[0] == "trinityfs" and len(parts) > 1 and parts[1] != front:
                        where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                        edges.setdefault((front, parts[1]), []).append(where)
    return edges


def test_no_front_end_imports_a_layer_below_the_catalog():
    below = {e: w for e, w in _edges().items() if e[1] in LOWER}
    assert below == {}


def test_front_ends_import_each_other_only_as_stated():
    between = {e: w for e, w in _edges().items() if e[1] in FRONT_ENDS and e not in STATED}
    assert between == {}
