"""The `trinityfs` command (`trinityfs.cli.app`); `python -m trinityfs.cli` runs it.

Importing this package costs nothing: `main` imports the command (argparse, the catalog,
pyarrow) inside its guard, so Ctrl-C at any moment after the interpreter has started is
one line, `trinityfs: interrupted`, and exit status 130."""

import sys


def main(argv=None, *, stdout=None, stderr=None, stdin=None) -> int:
    """Run `trinityfs ARGV...` (default sys.argv[1:]); returns the exit status."""
    try:
        from trinityfs.cli.app import main as run
    except KeyboardInterrupt:
        (stderr or sys.stderr).write("trinityfs: interrupted\n")
        return 130
    return run(argv, stdout=stdout, stderr=stderr, stdin=stdin)


__all__ = ["main"]
