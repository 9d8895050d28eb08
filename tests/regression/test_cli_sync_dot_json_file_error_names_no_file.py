"""Regression (life5): `trinityfs sync` and a dot `.json` file in a namespace folder.

Every `<name>.json` is the definition of table or view `<name>`, dot-names too (they
are valid table names), so `.eslintrc.json` is `.eslintrc` and a sync stops on it: the
safe choice. But the line named the catalog path (`/sales/.eslintrc: unknown key(s)
...`), not the local file or why it was read; `--dry-run` planned "+ sales/.eslintrc"
and exited 0; and `sync trinity://sales DIR --delete` deleted the user's
`.eslintrc.json` (not a definition, never written by sync). Now the one line names the
file, the object it was taken for and why; the dry run fails the same way; the delete
is refused; nothing is committed or removed."""

from __future__ import annotations

from pathlib import Path

from regression_cli import run, sample

from trinityfs import Lakehouse

ESLINT = '{"root": true, "extends": "x"}'


def _setup(tmp_path) -> tuple[str, Path, Path, int]:
    root = str(tmp_path / "lake")
    sample(root)
    folder = tmp_path / "local"
    assert run(root, "sync", "trinity://", str(folder)).status == 0
    dot = folder / "sales" / ".eslintrc.json"
    dot.write_text(ESLINT)
    (folder / "sales" / "new.json").write_text('{"kind": "table"}')
    return root, folder, dot, Lakehouse.open(root).latest_version()


def test_sync_up_names_the_file_and_commits_nothing(tmp_path) -> None:
    root, folder, dot, before = _setup(tmp_path)
    for args in (
        [str(folder), "trinity://"],
        [str(folder), "trinity://", "--dry-run"],
        [str(folder / "sales"), "trinity://sales"],
    ):
        result = run(root, "sync", *args)
        assert result.status == 1, (args, result.out)
        assert len(result.err.splitlines()) == 1, result.err
        assert result.err.startswith(f"trinityfs: {dot}: read as the definition of table or view ")
        assert "/sales/.eslintrc" in result.err and "unknown key(s)" in result.err
        assert "nothing changed" in result.err
    assert Lakehouse.open(root).latest_version() == before
    assert run(root, "info", "/sales/new").status == 1


def test_sync_down_delete_keeps_a_file_that_is_no_definition(tmp_path) -> None:
    root, folder, dot, _ = _setup(tmp_path)
    (folder / "sales" / "new.json").unlink()
    (folder / "sales" / "stale.json").write_text('{"kind": "view"}')
    result = run(root, "sync", "trinity://sales", str(folder / "sales"), "--delete")
    assert result.status == 1 and len(result.err.splitlines()) == 1, result.err
    assert result.err.startswith(f"trinityfs: {dot}: sync would delete it as the definition")
    assert dot.read_text() == ESLINT
    assert (folder / "sales" / "stale.json").exists()  # nothing removed before the refusal
