"""Issue 11 item 7: `rm -r` dropped a whole namespace tree with no confirmation and no
--dry-run; rollback and expire had no --dry-run either."""

from __future__ import annotations

import io

from regression_cli import run, sample

from trinityfs.cli import main


def test_rm_r_of_a_namespace_tree_needs_yes_off_a_terminal(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    result = run(root, "rm", "-r", "/sales")
    assert result.status == 1 and "--yes" in result.err and result.err.count("\n") == 1
    assert "2 tables and views" in result.err
    assert run(root, "ls", "/sales").out.split()[::2] == ["big_orders", "orders"]
    result = run(root, "rm", "-r", "--dry-run", "/sales")
    assert result.status == 0 and "would drop namespace /sales" in result.out
    assert run(root, "ls", "/").out == "sales/  namespace\n"
    assert run(root, "rm", "-r", "--yes", "/sales").status == 0
    assert run(root, "ls", "/").out == ""


def test_a_terminal_user_is_asked(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def ask(answer: str) -> int:
        err = io.StringIO()
        status = main(
            ["--root", root, "rm", "-r", "/sales"],
            stdout=io.StringIO(),
            stderr=err,
            stdin=Terminal(answer + "\n"),
        )
        assert "drop /sales with 2 tables and views? [y/N]" in err.getvalue()
        return status

    assert ask("n") == 1 and run(root, "ls", "/").out == "sales/  namespace\n"
    assert ask("y") == 0 and run(root, "ls", "/").out == ""


def test_rollback_and_expire_dry_runs_change_nothing(tmp_path):
    root = str(tmp_path / "lake")
    sample(root)
    latest = run(root, "--json", "show").json()["latest_version"]
    result = run(root, "rollback", "--dry-run", "1")
    assert result.status == 0 and "dropped" in result.out and "sales.orders" in result.out
    result = run(root, "expire", "--dry-run", "--max-age", "0", "--min-versions", "1")
    assert result.status == 0 and "dry run" in result.out
    assert run(root, "--json", "show").json()["latest_version"] == latest
