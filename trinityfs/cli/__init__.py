"""The `trinityfs` command (see `trinityfs.cli.main`); `python -m trinityfs.cli` runs it."""

from trinityfs.cli.main import main

__all__ = ["main"]
