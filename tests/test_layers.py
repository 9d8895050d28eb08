"""The layers depend one way (docs/ARCHITECTURE.md): errors <- format <- storage <- tree
<- txn <- lifecycle <- catalog <- front ends. A module imports only its own layer and the
ones below; a front end (fs, fuse, cli, iceberg, spark, rest, the demo) imports only the
catalog API, errors and other front ends, never storage, tree, txn, lifecycle or format.
Checked from the source (every import, also inside functions and TYPE_CHECKING blocks):
a semantic reached around the catalog is one front ends stop sharing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trinityfs"
CORE = ["errors", "lru", "jsontext", "format", "storage", "tree", "txn", "lifecycle", "catalog"]
FRONT_ENDS = {"fs", "fuse", "cli", "iceberg", "spark", "rest", "demo"}
SHARED = {"errors", "lru", "jsontext"}  # typed errors, a cache, bounded JSON: any layer


def _layer(module: str) -> str | None:
    """The layer of `trinityfs.<layer>...`; a name defined in trinityfs/__init__.py (the
    public API, `__version__`) is "__init__"."""
    parts = module.split(".")
    if parts[0] != "trinityfs":
        return None
    if len(parts) == 1 or parts[1] not in CORE + sorted(FRONT_ENDS):
        return "__init__"
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name == "trinityfs":  # from trinityfs import errors: the module named
                found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, name))
    return found


def _allowed(me: str, other: str) -> bool:
    if other in SHARED or other == me:
        return True
    if me in FRONT_ENDS:
        return other in FRONT_ENDS or other in ("catalog", "__init__")
    if me == "__init__":
        return other in CORE
    return other in CORE and CORE.index(other) <= CORE.index(me)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_known_layer():
    unknown = {
        str(path.relative_to(PACKAGE))
        for path in _modules()
        if (layer := path.relative_to(PACKAGE).with_suffix("").parts[0]) != "__init__"
        and layer not in CORE
        and layer not in FRONT_ENDS
    }
    assert not unknown, f"modules outside every layer (add them to tests/test_layers.py): {unknown}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_one_way(path):
    me = path.relative_to(PACKAGE).with_suffix("").parts[0]
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
        for line, name in _imports(path)
        if (other := _layer(name)) is not None and not _allowed(me, other)
    ]
    assert not wrong, "imports against the layers: " + "; ".join(wrong)


def test_the_check_sees_a_front_end_reaching_below_the_catalog(tmp_path):
    sample = tmp_path / "trinityfs" / "cli" / "x.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "def f():\n    from trinityfs.storage import Storage\n    from . import app\n"
    )
    assert _layer("trinityfs.errors") == "errors" and _layer("trinityfs.__version__") == "__init__"
    names = [name for _, name in _imports_below(sample, tmp_path / "trinityfs")]
    assert names == ["trinityfs.storage", "trinityfs.cli"]
    assert not _allowed("cli", "storage") and _allowed("cli", "catalog")
    assert not _allowed("txn", "lifecycle") and _allowed("lifecycle", "txn")
    assert not _allowed("catalog", "fs") and _allowed("fs", "fuse")


def _imports_below(path: Path, package: Path) -> list[tuple[int, str]]:
    global PACKAGE
    saved, PACKAGE = PACKAGE, package
    try:
        return _imports(path)
    finally:
        PACKAGE = saved
