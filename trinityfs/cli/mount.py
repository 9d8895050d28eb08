"""`trinityfs mount ROOT MOUNTPOINT`: the FUSE mount's own arguments (its -o are mount
options, so the global options are not repeated after it). Importing does not load libfuse."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import AddCommand


def register(add: AddCommand) -> None:
    from trinityfs.fuse.mount import USAGE_EPILOG, add_mount_arguments, cli_mount

    parser = add(
        "mount",
        cli_mount,
        "mount a lakehouse as a filesystem (FUSE)",
        global_options=False,
        epilog=USAGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mount_arguments(parser)
