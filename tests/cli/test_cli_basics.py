"""The command itself: root selection, --json, exit statuses, one-line errors."""

from __future__ import annotations

import io
import json

from trinityfs.cli.output import Progress, table


def test_init_and_show(run, root):
    result = run("init")
    assert result.status == 0 and "version 0" in result.out
    assert run("init").status == 1  # already exists
    assert run("init", "--exist-ok").status == 0
    shown = run("--json", "show").json()
    assert shown["latest_version"] == 0 and shown["definition"]["order"] == 128
    assert "order" in run("show").out


def test_init_options(run):
    result = run("init", "--order", "8", "--property", "team=data", "--isolation", "SERIALIZABLE")
    assert result.status == 0, result.err
    definition = run("--json", "show").json()["definition"]
    assert definition["order"] == 8
    # new lakehouses also record how their node files are written (FORMAT-CHOICES.md)
    assert definition["properties"] == {"team": "data", "node-file.compression": "zstd"}
    assert definition["txn_isolation_level"] == "SERIALIZABLE"


def test_root_from_environment_and_default(run, root, monkeypatch, tmp_path):
    monkeypatch.setenv("TRINITYFS_ROOT", root)
    assert run("init", root_arg=False).status == 0
    assert run("mkdir", "/a", root_arg=False).status == 0
    assert run("ls", root_arg=False).out == "a/  namespace\n"
    assert run("--root", root, "ls", root_arg=False).out == "a/  namespace\n"
    # the embedded default: ./lakehouse in the working directory
    monkeypatch.delenv("TRINITYFS_ROOT")
    monkeypatch.chdir(tmp_path)
    result = run("init", root_arg=False)
    assert result.status == 0 and (tmp_path / "lakehouse").is_dir()
    assert str(tmp_path / "lakehouse") in result.out


def test_the_real_command_in_a_subprocess(run_process, tmp_path):
    # TRINITYFS_ROOT is set by the fixture; errors are one line, never a traceback
    assert run_process("init").status == 0
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{not json")
    result = run_process("mkdir", "/a")
    assert result.status == 0 and result.out == "mkdir: version 1\n"
    result = run_process("put", str(bad), "/a/t")
    assert result.status == 1
    assert result.err.startswith("trinityfs: /a/t: not valid JSON")
    assert "Traceback" not in result.err and result.err.count("\n") == 1
    result = run_process("--json", "ls", "/", stdin=b"")
    assert result.status == 0 and result.json()[0]["name"] == "/a"


def test_usage_errors_are_one_line_and_exit_2(run):
    for args in (["nosuch"], [], ["info", "a", "b"], ["log", "-n", "x"]):
        result = run(*args)
        assert result.status == 2, args
        assert result.err.startswith("trinityfs: ") and result.err.count("\n") == 1, result.err


def test_errors_are_one_line_and_exit_1(run, tmp_path):
    result = run("ls")  # no lakehouse yet
    assert result.status == 1
    assert result.err.startswith("trinityfs: ") and result.err.count("\n") == 1
    assert "no lakehouse" in result.err
    run("init")
    for args in (
        ["cat", "/nope/x"],
        ["rm", "/v/0/x"],
        ["mkdir", "/a/b"],
        ["put", str(tmp_path / "missing.json"), "/a/b"],
        ["diff", "0", "nonsense"],
        ["rollback", "99"],
    ):
        result = run(*args)
        assert result.status == 1, args
        assert result.err.startswith("trinityfs: ") and result.err.count("\n") == 1, result.err
        assert "Traceback" not in result.err


def test_version_and_help(capsys):
    from trinityfs.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("trinityfs ")
    assert main(["--help"]) == 0
    assert "usage:" in capsys.readouterr().out


def test_storage_options(run, monkeypatch):
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", "[1]")
    result = run("init")
    assert result.status == 1 and "TRINITYFS_STORAGE_OPTIONS" in result.err
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", "{}")
    assert run("-o", "fsync=false", "init").status == 0
    assert run("-o", "nonsense", "ls").status == 2


def test_json_output_is_parseable(sample):
    assert sample("--json", "ls", "/").json()[0]["name"] == "/sales"
    assert sample("--json", "info", "/sales/orders").json()["kind"] == "table"
    assert sample("--json", "mkdir", "/x").json() == {"changed": True, "version": 4}


def test_table_and_progress():
    assert table([["a", "bb"], ["ccc", "d"]], ["X", "Y"]) == ["X    Y", "a    bb", "ccc  d"]
    quiet = io.StringIO()
    with Progress("things", 3, quiet) as bar:
        bar.update()
    assert quiet.getvalue() == ""  # not a terminal

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    with Progress("things", 4, tty) as bar:
        for _ in range(4):
            bar.update()
    assert "[" in tty.getvalue() and "4/4 things" in tty.getvalue()
    assert tty.getvalue().endswith("\r\033[K")
    assert json.loads(json.dumps({"ok": True}))
