"""edit: $EDITOR on the definition; commit on save, nothing when unchanged."""

from __future__ import annotations

import sys
import tempfile

import pytest


def editor(tmp_path, code: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import sys\npath = sys.argv[1]\n" + code)
    return f"{sys.executable} {script}"


@pytest.fixture
def with_editor(monkeypatch, tmp_path):
    temp = tmp_path / "temp"  # kept edits go here, not to /tmp
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def set_(code: str) -> None:
        monkeypatch.delenv("VISUAL", raising=False)
        monkeypatch.setenv("EDITOR", editor(tmp_path, code))

    return set_


def test_edit_commits_on_save(sample, with_editor):
    with_editor(
        "text = open(path).read().replace('\"ICEBERG\"', '\"DELTA\"')\n"
        "open(path, 'w').write(text)\n"
    )
    result = sample("edit", "/sales/orders")
    assert result.status == 0 and result.out == "edit /sales/orders: version 4\n", result.err
    assert '"DELTA"' in sample("cat", "/sales/orders").out


def test_edit_unchanged_commits_nothing(sample, with_editor):
    with_editor("pass\n")
    assert sample("edit", "/sales/orders").out == "edit /sales/orders: no change\n"
    with_editor(
        "import json\nvalue = json.load(open(path))\nopen(path, 'w').write(json.dumps(value))\n"
    )
    assert sample("edit", "/sales/orders").out == "edit /sales/orders: no change\n"
    assert sample("--json", "show").json()["latest_version"] == 3


def test_edit_invalid_keeps_the_text(sample, with_editor):
    with_editor("open(path, 'w').write('{broken')\n")
    result = sample("edit", "/sales/orders")
    assert result.status == 1 and "not valid JSON" in result.err
    assert "your edit is in" in result.err
    kept = result.err.rsplit("your edit is in ", 1)[1].strip()
    with open(kept) as f:
        assert f.read() == "{broken"


def test_edit_creates_a_new_object(sample, with_editor):
    with_editor("open(path, 'w').write('{\"kind\": \"view\"}')\n")
    assert sample("edit", "--create", "/sales/new_view").out == "edit /sales/new_view: version 4\n"
    assert sample("--json", "info", "/sales/new_view").json()["kind"] == "view"


def test_edit_conflict_with_a_concurrent_change(sample, with_editor, root):
    # the editor itself changes the table through another process: the edit conflicts
    with_editor(
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'trinityfs.cli', '--root', {root!r}, "
        "'put', '-', '/sales/orders'], input=b'{\"kind\": \"table\"}', check=True,\n"
        "    capture_output=True)\n"
        'open(path, \'w\').write(\'{"kind": "table", "definition": {"table_type": "X"}}\')\n'
    )
    result = sample("edit", "/sales/orders")
    assert result.status == 1 and "commit conflict on table sales.orders" in result.err
    # one line, "nothing committed" once (the conflict's own "retry" said it twice)
    assert len(result.err.strip().splitlines()) == 1
    assert result.err.count("nothing") == 1 and "retry" not in result.err
    kept = result.err.rsplit("your edit is in ", 1)[1].strip()
    with open(kept) as f:
        assert '"X"' in f.read()


def test_edit_errors(sample, with_editor):
    with_editor("raise SystemExit(3)\n")
    result = sample("edit", "/sales/orders")
    assert result.status == 1 and "exited with status 3" in result.err
    assert sample("edit", "/sales").status == 1
    assert sample("edit", "/v/1/sales/orders").status == 1


def test_edit_through_the_real_command(sample, run_process, tmp_path):
    code = (
        "text = open(path).read().replace('\"ICEBERG\"', '\"HUDI\"')\nopen(path, 'w').write(text)\n"
    )
    result = run_process(
        "edit",
        "/sales/orders",
        env={"EDITOR": editor(tmp_path, code), "VISUAL": "", "TMPDIR": str(tmp_path)},
    )
    assert result.status == 0 and result.out == "edit /sales/orders: version 4\n", result.err
    assert '"HUDI"' in sample("cat", "/sales/orders").out
