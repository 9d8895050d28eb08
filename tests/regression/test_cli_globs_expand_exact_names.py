"""Issue 11 items 4 and 7 (the command's part): `trinityfs rm '/a/t*'` dropped t1, t2 and
`t*`; globs worked in rm/mv but not in cat/ls/find; a glob matching nothing printed a
Python list."""

from __future__ import annotations

import json

from regression_cli import run

from trinityfs.fs.spec import TrinityFileSystem


def _lake(root: str) -> None:
    assert run(root, "init").status == 0
    assert run(root, "mkdir", "/a").status == 0
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    for name in ("t1", "t2", "t*", "t?", "t[1]"):
        fs.write_definition(f"/a/{name}", b'{"kind": "table"}')


def _names(root: str) -> list[str]:
    return sorted(e["name"].rsplit("/", 1)[1] for e in run(root, "--json", "ls", "/a").json())


def test_exact_names_are_never_expanded(tmp_path):
    root = str(tmp_path / "lake")
    _lake(root)
    assert run(root, "rm", "/a/t*").status == 0
    assert _names(root) == ["t1", "t2", "t?", "t[1]"]
    assert run(root, "rm", "/a/t[1]").status == 0
    assert _names(root) == ["t1", "t2", "t?"]
    assert run(root, "mv", "/a/t?", "/a/renamed").status == 0
    assert _names(root) == ["renamed", "t1", "t2"]
    assert run(root, "cp", "/a/t1", "/a/x*").status == 0
    assert "x*" in _names(root) and run(root, "cat", "/a/x*").status == 0


def test_patterns_only_with_glob_everywhere(tmp_path):
    root = str(tmp_path / "lake")
    _lake(root)
    matched = run(root, "--json", "cat", "--glob", "/a/t?")
    assert matched.status == 0
    assert sorted(json.loads(matched.out)) == ["/a/t*", "/a/t1", "/a/t2", "/a/t?"]
    listed = run(root, "ls", "-g", "/a/t[12]").out.split()
    assert listed == ["/a/t1", "table", "/a/t2", "table"]
    assert run(root, "find", "/", "--name", "t[12]").out.split() == ["/a/t1", "/a/t2"]
    assert run(root, "rm", "--glob", "/a/t[12]").status == 0
    assert _names(root) == ["t*", "t?", "t[1]"]


def test_a_pattern_matching_nothing_is_one_line(tmp_path):
    root = str(tmp_path / "lake")
    _lake(root)
    for command in ("cat", "ls", "rm"):
        result = run(root, command, "--glob", "/a/zz*")
        assert result.status == 1, command
        assert result.err == "trinityfs: /a/zz*: no match\n", result.err
        assert "[" not in result.err.replace("/a/zz*", "")
    result = run(root, "rm", "/a/zz*")  # exact: no such table
    assert result.status == 1 and result.err.count("\n") == 1 and "[]" not in result.err
