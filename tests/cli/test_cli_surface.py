"""The CLI over the catalog's one surface (issue 12): configuration from `read_config`,
one-line errors for hostile input, no feature probing, no modules importing each other."""

from __future__ import annotations

import ast
import pathlib

import trinityfs.cli as cli_pkg


def test_cat_json_of_deeply_nested_content_is_one_line(sample, monkeypatch):
    from trinityfs.fs.spec import TrinityFileSystem

    deep = b"[" * 200_000 + b"]" * 200_000  # deeper than Python's recursion limit
    monkeypatch.setattr(TrinityFileSystem, "cat_file", lambda self, path, *a, **k: deep)
    result = sample("--json", "cat", "/sales/orders")
    assert result.status == 1
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "nested too deeply" in result.err and "/sales/orders" in result.err
    assert "internal error" not in result.err


def test_recursion_anywhere_else_is_one_line_named_internal(sample, monkeypatch):
    """Every JSON input is bounded before parsing (trinityfs/jsontext.py): a RecursionError
    left is a bug of ours, not the user's input: one line naming it, no traceback."""
    from trinityfs.fs.spec import TrinityFileSystem

    def info(self, path, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(TrinityFileSystem, "info", info)
    result = sample("info", "/sales/orders")
    assert result.status == 1 and result.err.count("\n") == 1
    assert "internal error: RecursionError" in result.err and "Traceback" not in result.err


def test_root_from_the_fsspec_config_when_no_option_or_environment(tmp_path, run, monkeypatch):
    from fsspec.config import conf

    monkeypatch.delenv("TRINITYFS_ROOT", raising=False)
    monkeypatch.setitem(conf, "trinity", {"root": str(tmp_path / "conf-lake")})
    assert run("init", root_arg=False).status == 0
    assert (tmp_path / "conf-lake").is_dir()
    # the environment wins over fsspec's config, --root over both
    monkeypatch.setenv("TRINITYFS_ROOT", str(tmp_path / "env-lake"))
    assert run("init", root_arg=False).status == 0
    assert (tmp_path / "env-lake").is_dir()
    assert run("ls", "/").status == 1  # the fixture's --root names no lakehouse yet


def test_bad_environment_options_name_the_variable(run, monkeypatch):
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", "{not json")
    result = run("ls", "/")
    assert result.status == 1 and "$TRINITYFS_STORAGE_OPTIONS" in result.err
    assert result.err.count("\n") == 1


def _imports(path: pathlib.Path, *, all_: bool) -> set[str]:
    """Modules `path` imports (all_=False: not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    if not all_:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_command_modules_do_not_import_each_other_or_probe_features():
    folder = pathlib.Path(cli_pkg.__file__).parent
    assert not (folder / "main.py").exists()
    assert not {".lifecycle", "trinityfs.cli.lifecycle"} & _imports(folder / "app.py", all_=True)
    # lifecycle names app's AddCommand for its type hints only
    assert not {".app", "trinityfs.cli.app"} & _imports(folder / "lifecycle.py", all_=False)
    for path in folder.glob("*.py"):
        text = path.read_text()
        for probe in ("_accepts(", ".has(", "inspect.signature", "hasattr(ctx.lake"):
            assert probe not in text, f"{path.name} probes with {probe}"
