"""Regression (life5): `trinityfs edit` left temporary files behind and lost edits.

Before: an editor that failed without saving anything left its untouched
/tmp/trinityfs-*.json behind (and named it as if it held an edit); an editor that
removed the file made the clean-up raise "[Errno 2] No such file or directory" instead
of saying what happened; Ctrl-C while the editor ran deleted an edit already saved; a
path longer than a file name can be (names up to the lakehouse's limits) failed with
"File name too long" before the editor started. Now the temporary file is kept only
when it holds an edit that was not committed (and the one line names it), and is
removed otherwise; nothing is committed in any of these cases."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from regression_cli import run, sample

import trinityfs
from trinityfs import Lakehouse

CODE_ROOT = str(Path(trinityfs.__file__).resolve().parents[1])  # the code under test


@pytest.fixture
def lake(tmp_path, monkeypatch) -> tuple[str, Path]:
    root = str(tmp_path / "lake")
    sample(root)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("VISUAL", raising=False)
    return root, temp


def _editor(tmp_path: Path, code: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import os, sys, time\npath = sys.argv[1]\n" + code)
    return f"{sys.executable} {script}"


def _version(root: str) -> int:
    return Lakehouse.open(root).latest_version()


def test_failed_editor_without_an_edit_leaves_nothing(lake, tmp_path, monkeypatch) -> None:
    root, temp = lake
    before = _version(root)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "raise SystemExit(3)\n"))
    result = run(root, "edit", "/sales/orders")
    assert result.status == 1 and "exited with status 3; nothing committed" in result.err
    assert "your edit is in" not in result.err and "the text is in" not in result.err
    assert list(temp.iterdir()) == []
    assert _version(root) == before


def test_failed_editor_with_an_edit_keeps_it(lake, tmp_path, monkeypatch) -> None:
    root, temp = lake
    before = _version(root)
    code = "open(path, 'w').write('{\"kind\": \"table\"}')\nraise SystemExit(3)\n"
    monkeypatch.setenv("EDITOR", _editor(tmp_path, code))
    result = run(root, "edit", "/sales/orders")
    assert result.status == 1 and "your edit is in" in result.err
    kept = result.err.rsplit("your edit is in ", 1)[1].strip().rstrip(")")
    assert Path(kept).read_text() == '{"kind": "table"}'
    assert [str(p) for p in temp.iterdir()] == [kept]
    assert _version(root) == before


def test_editor_removing_the_file(lake, tmp_path, monkeypatch) -> None:
    root, temp = lake
    before = _version(root)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "os.unlink(path)\n"))
    result = run(root, "edit", "/sales/orders")
    assert result.status == 1 and "removed" in result.err and "nothing committed" in result.err
    assert "Errno" not in result.err and len(result.err.splitlines()) == 1
    assert list(temp.iterdir()) == [] and _version(root) == before


def test_a_path_longer_than_a_file_name(tmp_path, monkeypatch) -> None:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, namespace_name_max_size_bytes=200, table_name_max_size_bytes=200)
    lake.create_namespace("n" * 200)
    lake.create_table("n" * 200, "t" * 200)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.delenv("VISUAL", raising=False)
    result = run(root, "edit", f"/{'n' * 200}/{'t' * 200}")
    assert result.status == 0 and result.out.endswith(": no change\n"), result.err
    assert list(temp.iterdir()) == []


def test_a_path_of_multibyte_names(tmp_path, monkeypatch) -> None:
    """The prefix was capped at 60 characters, not bytes: 60 four-byte characters and the
    rest of the name came to 264 bytes, over the 255 a file name may have (review)."""
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, namespace_name_max_size_bytes=200, table_name_max_size_bytes=200)
    lake.create_namespace("\U0001f600" * 50)
    lake.create_table("\U0001f600" * 50, "\U0001f600" * 10)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.delenv("VISUAL", raising=False)
    result = run(root, "edit", f"/{chr(0x1F600) * 50}/{chr(0x1F600) * 10}")
    assert result.status == 0 and result.out.endswith(": no change\n"), result.err
    assert list(temp.iterdir()) == []


def _interrupted_edit(root: str, tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    temp = tmp_path / "temp"
    temp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "TRINITYFS_ROOT": root,
        "TMPDIR": str(temp),
        "PYTHONPATH": CODE_ROOT,
        "VISUAL": "",
        "EDITOR": _editor(tmp_path, code + "os.kill(os.getppid(), 2)\ntime.sleep(30)\n"),
    }
    return subprocess.run(
        [sys.executable, "-m", "trinityfs.cli", "edit", "/sales/orders"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    """In the child: SIGINT's default disposition, as a shell gives a command. A test run
    started in the background (`cmd &` in a script ignores SIGINT, and children inherit
    that) would otherwise make the CLI ignore the editor's Ctrl-C and commit the edit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="POSIX signals")
def test_ctrl_c_keeps_a_saved_edit_and_commits_nothing(lake, tmp_path) -> None:
    root, _ = lake
    before = _version(root)
    saved = 'open(path, \'w\').write(\'{"kind": "table", "definition": {}}\')\n'
    result = _interrupted_edit(root, tmp_path, saved)
    assert result.returncode == 130, result.stderr
    assert "nothing committed, your edit is in" in result.stderr, result.stderr
    kept = result.stderr.rsplit("your edit is in ", 1)[1].strip()
    assert Path(kept).parent == tmp_path / "temp"
    assert Path(kept).read_text() == '{"kind": "table", "definition": {}}'
    assert _version(root) == before


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="POSIX signals")
def test_ctrl_c_without_an_edit_leaves_nothing(lake, tmp_path) -> None:
    root, _ = lake
    result = _interrupted_edit(root, tmp_path, "")
    assert result.returncode == 130 and result.stderr == "trinityfs: interrupted\n"
    assert list((tmp_path / "temp").iterdir()) == []
