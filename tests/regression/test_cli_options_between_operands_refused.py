"""Regression (life5): an option between a command's operands cut the operands off.

`trinityfs props /a --unset k j=z` was refused as "unrecognized arguments: j=z" (and
`rm /a -r /b`, `mkdir /c --property x=1 /d` alike): argparse gives a `*`/`+` operand
list only the words before the first option. Now a command takes options anywhere
among its operands. Setting and unsetting one key at once is contradictory: one line,
exit 2, nothing committed. A root that is a file said "exists of '_0000...arrow' under
... failed: NotADirectoryError"; now it says it is a file. `props` alone named KEY=VALUE
as a required argument."""

from __future__ import annotations

import json

from regression_cli import run


def _lake(tmp_path) -> str:
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    assert run(root, "mkdir", "/a", "--property", "k=1").status == 0
    return root


def test_props_unset_then_set(tmp_path) -> None:
    root = _lake(tmp_path)
    result = run(root, "props", "/a", "--unset", "k", "j=z")
    assert result.status == 0, result.err
    assert json.loads(run(root, "--json", "props", "/a").out) == {"j": "z"}


def test_options_between_operands(tmp_path) -> None:
    root = _lake(tmp_path)
    made = run(root, "mkdir", "/c", "--property", "x=1", "/d")
    assert made.status == 0, made.err
    listed = run(root, "ls", "/", "-l")
    assert listed.status == 0 and "c/" in listed.out and "d/" in listed.out, listed.err
    removed = run(root, "rm", "/c", "-r", "/d", "--yes")
    assert removed.status == 0, removed.err
    names = run(root, "ls", "/").out
    assert "c/" not in names and "d/" not in names


def test_set_and_unset_one_key_is_one_usage_line(tmp_path) -> None:
    root = _lake(tmp_path)
    before = run(root, "--json", "log").out
    result = run(root, "props", "/a", "--unset", "k", "k=z")
    assert result.status == 2
    assert result.err.startswith("trinityfs: property 'k' is both set and unset"), result.err
    assert len(result.err.splitlines()) == 1
    assert run(root, "--json", "log").out == before  # nothing committed


def test_props_without_a_path_names_only_the_path(tmp_path) -> None:
    result = run(_lake(tmp_path), "props")
    assert result.status == 2
    assert "required: path (" in result.err and "KEY=VALUE" not in result.err, result.err


def test_root_that_is_a_file(tmp_path) -> None:
    path = tmp_path / "afile"
    path.write_text("hello")
    for command in (["ls", "/"], ["log"], ["fsck"], ["expire", "--dry-run"]):
        result = run(str(path), *command)
        assert result.status == 1, (command, result.err)
        assert result.err == f"trinityfs: no lakehouse at {path}: it is a file, not a directory\n"
    assert path.read_text() == "hello"
