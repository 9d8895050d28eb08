"""Issue 11 item 1: `trinityfs --root /etc init` wrote lakehouse files into a non-empty
directory that held no lakehouse."""

from __future__ import annotations

import io

from trinityfs.cli import main


def _run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def test_init_refuses_a_non_empty_directory_that_is_no_lakehouse(tmp_path):
    root = tmp_path / "etc"
    root.mkdir()
    (root / "passwd").write_text("root:x:0:0")
    status, err = _run("--root", str(root), "init")
    assert status == 1
    assert err.startswith("trinityfs: ") and err.count("\n") == 1
    assert "not empty" in err and "passwd" in err
    assert sorted(p.name for p in root.iterdir()) == ["passwd"]  # nothing written
    status, _ = _run("--root", str(root), "init", "--exist-ok")
    assert status == 1 and sorted(p.name for p in root.iterdir()) == ["passwd"]


def test_init_refuses_a_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    status, err = _run("--root", str(path), "init")
    assert status == 1 and "not a directory" in err and path.read_text() == "x"


def test_init_still_works_in_new_empty_and_lakehouse_directories(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run("--root", str(empty), "init")[0] == 0
    assert _run("--root", str(empty), "init", "--exist-ok")[0] == 0
    status, err = _run("--root", str(empty), "init")
    assert status == 1 and "already exists" in err
    assert _run("--root", str(tmp_path / "new" / "lake"), "init")[0] == 0
