"""The `trinityfs` command: a TrinityLake lakehouse from the shell.

    trinityfs [--root URL] [--json] [-o KEY=VALUE ...] COMMAND ...

The root is --root, else $TRINITYFS_ROOT, else the local directory ./lakehouse. Paths use
the grammar of the trinity:// filesystem (/<namespace>/<table or view>, /v/<version>/...).
Output is human-readable tables; --json prints JSON for scripts. Every change is one
commit. Errors print one line, "trinityfs: <message>", on stderr and exit 1 (2 for a
usage error); never a traceback (set TRINITYFS_DEBUG=1 to see one for an internal error).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from trinityfs.errors import TrinityError
from trinityfs.fs.errors import message_of
from trinityfs.fs.spec import ROOT_ENV, default_root

from .output import Output

STORAGE_OPTIONS_ENV = "TRINITYFS_STORAGE_OPTIONS"
DEBUG_ENV = "TRINITYFS_DEBUG"


class UsageError(Exception):
    """A command line that does not parse (exit status 2)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def storage_options(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """$TRINITYFS_STORAGE_OPTIONS (a JSON object), then -o KEY=VALUE (JSON values allowed)."""
    options: dict[str, Any] = {}
    env = os.environ.get(STORAGE_OPTIONS_ENV)
    if env:
        try:
            loaded = json.loads(env)
        except json.JSONDecodeError as exc:
            raise ValueError(f"${STORAGE_OPTIONS_ENV} is not a JSON object: {exc}") from None
        if not isinstance(loaded, dict):
            raise ValueError(f"${STORAGE_OPTIONS_ENV} is not a JSON object")
        options.update(loaded)
    for key, value in pairs:
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


class Context:
    """What every command gets: the root, storage options, output, and lazy fs/lakehouse."""

    def __init__(self, args: argparse.Namespace, out: Output):
        self.args = args
        self.out = out
        self.root = args.root or default_root()
        self.storage_options = storage_options(args.storage_option or [])
        self._fs = None

    @property
    def fs(self):
        if self._fs is None:
            from trinityfs.fs.spec import TrinityFileSystem

            self._fs = TrinityFileSystem(
                root=self.root, storage_options=self.storage_options, skip_instance_cache=True
            )
        return self._fs

    @property
    def lake(self):
        return self.fs.lake


def build_parser() -> ArgumentParser:
    from trinityfs import __version__
    from trinityfs.cli import commands, lifecycle, serve
    from trinityfs.fuse.mount import add_mount_parser  # does not load libfuse

    parser = ArgumentParser(
        prog="trinityfs",
        description="A TrinityLake lakehouse catalog from the shell.",
        epilog=(
            f"The root is --root, else ${ROOT_ENV}, else ./lakehouse. Paths: / (latest), "
            "/<namespace>, /<namespace>/<table or view>, /v (versions), /v/<n>/..., "
            "/v/<ISO time>/..., /v/<export>/..., /v/latest/... ."
        ),
    )
    parser.add_argument(
        "--root", help=f"the lakehouse URL or directory (default ${ROOT_ENV} or ./lakehouse)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "-o",
        "--storage-option",
        action="append",
        type=_key_value,
        metavar="KEY=VALUE",
        help=f"an option of the store (repeatable; also ${STORAGE_OPTIONS_ENV} as JSON)",
    )
    parser.add_argument("--version", action="version", version=f"trinityfs {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.register(sub)
    lifecycle.register(sub)
    add_mount_parser(sub)  # importing it does not load libfuse
    serve.register(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit status (0 ok, 1 error, 2 usage error)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr

    def fail(message: str, status: int) -> int:
        stderr.write(f"trinityfs: {' '.join(message.split())}\n")
        stderr.flush()
        return status

    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("a command is required (see 'trinityfs --help')")
        ctx = Context(args, Output(args.json, stdout, stderr))
        status = args.func(ctx, args)
        stdout.flush()
        return int(status or 0)
    except UsageError as exc:
        return fail(str(exc), 2)
    except SystemExit as exc:  # --help and --version exit 0 through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        # the reader went away (e.g. `trinityfs cat ... | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except (TrinityError, OSError, ValueError, LookupError) as exc:
        return fail(message_of(exc), 1)
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get(DEBUG_ENV):
            raise
        return fail(f"internal error: {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1)", 1)


__all__ = ["ArgumentParser", "Context", "UsageError", "build_parser", "main"]
