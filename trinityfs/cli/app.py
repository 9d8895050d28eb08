"""The `trinityfs` command (`trinityfs.cli.main` runs it): a TrinityLake lakehouse from the shell.

    trinityfs [--root URL] [--json] [-o KEY=VALUE ...] COMMAND ... [--root URL] [--json] ...

The root is --root, else $TRINITYFS_ROOT, else the local directory ./lakehouse. Paths use
the grammar of the trinity:// filesystem (/<namespace>/<table or view>, /v/<version>/...).
The global options go before or after the command. Output is human-readable tables;
--json prints JSON for scripts. Every change is one commit. Errors print one line,
"trinityfs: <message>", on stderr and exit 1 (2 for a usage error, 130 when interrupted);
never a traceback (TRINITYFS_DEBUG=1 shows one for an internal error).

Commands live in modules listed in COMMANDS, each with `register(add)`; a new command
module is one line there.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Protocol, TextIO

from .errors import Refused, UsageError, message

DEBUG_ENV = "TRINITYFS_DEBUG"
ROOT_ENV = "TRINITYFS_ROOT"

# The command table: modules with `register(add: AddCommand) -> None`, in help order.
COMMANDS: tuple[str, ...] = (
    "trinityfs.cli.files",
    "trinityfs.cli.transfer",
    "trinityfs.cli.load",
    "trinityfs.cli.history",
    "trinityfs.cli.lifecycle",
    "trinityfs.cli.mount",
    "trinityfs.cli.serve",
)


class AddCommand(Protocol):
    """`add(name, func, help)` makes a subcommand running `func(ctx, args) -> int`."""

    def __call__(
        self,
        name: str,
        func: Callable[..., int],
        help: str,
        *,
        global_options: bool = True,
        **kwargs: Any,
    ) -> argparse.ArgumentParser: ...


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit status 2)."""

    _intermixing = False

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """A command (no subcommands of its own) takes options between its operands:
        `props /a --unset k k=z`, `rm /a -r /b`. argparse leaves what follows such an
        option unrecognized; those are parsed again intermixed (not always: 3.11's
        intermixed parsing mishandles `--` and optional operands)."""
        parsed = super().parse_known_args(args, namespace)
        if not parsed[1] or self._subparsers is not None or self._intermixing:
            return parsed
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        except UsageError:
            return parsed
        finally:
            self._intermixing = False


def _global_options(parser: argparse.ArgumentParser, *, after: bool) -> None:
    """--root, --json, -o, --verify; after the command they land in sub_* and are merged."""
    from .context import STORAGE_OPTIONS_ENV, key_value

    prefix = "sub_" if after else ""
    default = argparse.SUPPRESS if after else None
    parser.add_argument(
        "--root",
        dest=prefix + "root",
        default=default,
        help=(
            f"the lakehouse URL or directory (default ${ROOT_ENV}, fsspec's [trinity] root, "
            "or ./lakehouse)"
        ),
    )
    parser.add_argument(
        "--json",
        dest=prefix + "json",
        action="store_true",
        default=default if after else False,
        help="print JSON for scripts",
    )
    parser.add_argument(
        "-o",
        "--storage-option",
        dest=prefix + "storage_option",
        action="append",
        type=key_value,
        default=default,
        metavar="KEY=VALUE",
        help=f"an option of the store (repeatable; also ${STORAGE_OPTIONS_ENV} as JSON)",
    )
    parser.add_argument(
        "--verify",
        dest=prefix + "verify",
        choices=("reads", "tree"),
        default=default,
        help=(
            "what a commit verifies: reads (what it reads; the default) or tree (every "
            "file of the tree, before writing; also $TRINITYFS_VERIFY)"
        ),
    )


def build_parser() -> ArgumentParser:
    from trinityfs import __version__

    parser = ArgumentParser(
        prog="trinityfs",
        description="A TrinityLake lakehouse catalog from the shell.",
        epilog=(
            f"The root is --root, else ${ROOT_ENV}, else fsspec's [trinity] root, else "
            "./lakehouse. Paths: / (latest), "
            "/<namespace>, /<namespace>/<table or view>, /v (versions), /v/<n>/..., "
            "/v/<ISO time>/..., /v/<export>/..., /v/latest/... . --root, --json and -o go "
            "before or after the command."
        ),
    )
    _global_options(parser, after=False)
    parser.add_argument("--version", action="version", version=f"trinityfs {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    after = ArgumentParser(add_help=False)
    _global_options(after, after=True)

    def add(
        name: str,
        func: Callable[..., int],
        help: str,
        *,
        global_options: bool = True,
        **kwargs: Any,
    ) -> argparse.ArgumentParser:
        kwargs.setdefault("description", help)
        parents = [after] if global_options else []
        command = sub.add_parser(name, help=help, parents=parents, **kwargs)
        command.set_defaults(func=func)
        return command

    for module in COMMANDS:
        importlib.import_module(module).register(add)
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse, merging the global options given after the command into those before."""
    args = parser.parse_args(argv)
    if args.command is None:
        raise UsageError("a command is required (see 'trinityfs --help')")
    if getattr(args, "sub_root", None):
        args.root = args.sub_root
    args.json = bool(args.json or getattr(args, "sub_json", False))
    args.storage_option = (args.storage_option or []) + (getattr(args, "sub_storage_option", []))
    if getattr(args, "sub_verify", None):
        args.verify = args.sub_verify
    return args


def Context(args: argparse.Namespace, out: Any, stdin: TextIO | None = None) -> Any:
    """The commands' context (`trinityfs.cli.context.Context`), for callers of this module."""
    from .context import Context as _Context

    return _Context(args, out, stdin)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run the command; returns the exit status (0 ok, 1 error, 2 usage, 130 interrupted)."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr

    def fail(text: str, status: int) -> int:
        stderr.write(f"trinityfs: {' '.join(text.split())}\n")
        stderr.flush()
        return status

    try:
        from trinityfs.errors import TrinityError

        from .output import Output

        parser = build_parser()
        args = parse(parser, argv)
        if args.command != "mount":  # the mount sets up its own log
            _log_warnings_as_one_line(stderr)
        ctx = Context(args, Output(args.json, stdout, stderr), stdin)
        status = args.func(ctx, args)
        stdout.flush()
        return int(status or 0)
    except UsageError as exc:
        return fail(str(exc), 2)
    except SystemExit as exc:  # --help and --version exit 0 through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return interrupted(stderr)
    except BrokenPipeError:
        # the reader went away (e.g. `trinityfs cat ... | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except Refused as exc:
        return fail(message(exc), 1)
    except (TrinityError, OSError, ValueError, LookupError) as exc:
        return fail(message(exc), 1)
    except Exception as exc:  # a bug: still one line, unless debugging
        if os.environ.get(DEBUG_ENV):
            raise
        return fail(f"internal error: {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1)", 1)


class _OneLineWarnings(logging.Handler):
    """The library's warnings as `trinityfs: warning: ...`, each text once per process."""

    def __init__(self, stream: TextIO):
        super().__init__(logging.WARNING)
        self.stream = stream
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        text = " ".join(record.getMessage().split())
        if text not in self.seen:
            self.seen.add(text)
            self.stream.write(f"trinityfs: warning: {text}\n")


def _log_warnings_as_one_line(stderr: TextIO) -> None:
    log = logging.getLogger("trinityfs")
    for handler in list(log.handlers):
        if isinstance(handler, _OneLineWarnings):
            log.removeHandler(handler)
    log.addHandler(_OneLineWarnings(stderr))
    log.propagate = False


def interrupted(stderr: TextIO) -> int:
    """Ctrl-C: one line, exit status 130; a second Ctrl-C cannot interrupt this."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        stderr.write("trinityfs: interrupted\n")
        stderr.flush()
    finally:
        signal.signal(signal.SIGINT, previous)
    return 130


__all__ = ["COMMANDS", "AddCommand", "ArgumentParser", "Context", "build_parser", "main"]
