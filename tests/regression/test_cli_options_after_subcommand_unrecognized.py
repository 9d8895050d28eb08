"""Issue 11 item 7: `ls --json` and `--root` after the subcommand failed with
"unrecognized arguments"."""

from __future__ import annotations

import io

from regression_cli import sample

from trinityfs.cli import main


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_global_options_before_or_after_the_command(tmp_path, monkeypatch):
    root = str(tmp_path / "lake")
    sample(root)
    monkeypatch.delenv("TRINITYFS_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # ./lakehouse does not exist: only --root finds it
    before = _run("--root", root, "--json", "ls", "/sales")
    after = _run("ls", "/sales", "--json", "--root", root)
    mixed = _run("--json", "ls", "--root", root, "/sales")
    assert before[0] == after[0] == mixed[0] == 0, (after, mixed)
    assert before[1] == after[1] == mixed[1]
    assert '"name": "/sales/orders"' in after[1]
    status, _, err = _run("ls", "/sales", f"--root={root}", "-o", "fsync=false")
    assert status == 0, err
