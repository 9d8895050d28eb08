"""The `trinityfs` command (see `trinityfs.cli.main`); `python -m trinityfs.cli` runs it.

Importing this package is cheap (argparse and the standard library): `main` imports the
catalog, pyarrow and the commands inside its guard, so Ctrl-C at any moment of start-up
is one line and exit status 130."""

from trinityfs.cli.main import main

__all__ = ["main"]
