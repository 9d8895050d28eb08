"""Issue 11 item 7: `EDITOR=true trinityfs edit /ns/typo` created and committed an empty
table."""

from __future__ import annotations

from regression_cli import run, sample


def test_edit_of_a_missing_object_without_create_commits_nothing(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.delenv("VISUAL", raising=False)
    before = run(root, "--json", "show").json()["latest_version"]
    result = run(root, "edit", "/sales/typo")
    assert result.status == 1 and "--create" in result.err
    # even with --create, an untouched template is not a table
    result = run(root, "edit", "--create", "/sales/typo")
    assert result.status == 0 and "no change" in result.out
    assert run(root, "--json", "show").json()["latest_version"] == before
    assert run(root, "info", "/sales/typo").status == 1


def test_edit_with_no_change_commits_nothing(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    monkeypatch.setenv("EDITOR", "true")
    before = run(root, "--json", "show").json()["latest_version"]
    assert run(root, "edit", "/sales/orders").out == "edit /sales/orders: no change\n"
    assert run(root, "--json", "show").json()["latest_version"] == before
