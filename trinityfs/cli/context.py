"""What every command gets (`Context`) and the small readings they share: durations,
version selectors, exact names versus glob patterns, confirmations."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TextIO

from .errors import Refused, UsageError
from .output import Output

if TYPE_CHECKING:
    from trinityfs.catalog import Lakehouse
    from trinityfs.fs.spec import TrinityFileSystem

STORAGE_OPTIONS_ENV = "TRINITYFS_STORAGE_OPTIONS"  # read by trinityfs.catalog.read_config

# -- durations ----------------------------------------------------------------------------

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w)")


def duration(text: str) -> int:
    """Milliseconds in `7d`, `12h`, `30m`, `45s`, `500ms`, `1h30m`; a bare number is millis."""
    text = text.strip()
    if len(text) > 40:  # no real duration is longer; int() and float() fail on huge ones
        raise argparse.ArgumentTypeError(f"{text[:40]!r}...: a duration this long is not one")
    if text.isascii() and text.isdigit():
        return int(text)
    pos, total = 0, Fraction(0)
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += Fraction(match.group(1)) * _UNITS[match.group(2)]  # exact, no float
        pos = match.end()
    if pos != len(text) or not text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration (e.g. 7d, 12h, 30m, 45s, 500ms, 1h30m)"
        )
    if total.denominator != 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number of milliseconds ({float(total):g} ms)"
        )
    return int(total)


def duration_text(millis: int) -> str:
    """`3d`, `1h30m`, `500ms`: the shortest exact reading of `millis`."""
    if millis == 0:
        return "0"
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        size = _UNITS[unit]
        if millis >= size:
            parts.append(f"{millis // size}{unit}")
            millis %= size
    return "".join(parts)


# -- storage options ----------------------------------------------------------------------


def key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def storage_options(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The -o KEY=VALUE options (JSON values allowed): the catalog's one rule."""
    from trinityfs.catalog.config import storage_options_from_pairs

    return storage_options_from_pairs(pairs)


# -- the context --------------------------------------------------------------------------


class Context:
    """The root, storage options and output of one run, with the filesystem opened lazily.

    Root and storage options come from the catalog's one configuration reader
    (`trinityfs.catalog.read_config`): --root / -o, then $TRINITYFS_ROOT /
    $TRINITYFS_STORAGE_OPTIONS, then fsspec's config, then ./lakehouse. Versions are
    chosen per path (`/v/<selector>/...`) and per option (--version); a configured pin
    ($TRINITYFS_VERSION) is refused rather than ignored, except by `mount`.
    """

    def __init__(self, args: argparse.Namespace, out: Output | None, stdin: TextIO | None = None):
        from trinityfs.catalog import read_config

        self.args = args
        self.out = out or Output(False)
        self.stdin = stdin or sys.stdin
        self.config = read_config(
            root=getattr(args, "root", None) or None,
            storage_options=storage_options(getattr(args, "storage_option", None) or []),
            verify=getattr(args, "verify", None),
        )
        if self.config.version is not None and getattr(args, "command", None) != "mount":
            from trinityfs.errors import InvalidArgumentError

            source = self.config.sources.get("version", "")
            where = "$TRINITYFS_VERSION" if source == "the environment" else source
            raise InvalidArgumentError(
                f"{where} pins catalog version {self.config.version!r}, but trinityfs "
                "commands choose versions per path (v/<selector>/...) and per --version: "
                "unset it (only 'trinityfs mount' takes it, as its --version)"
            )
        self.root = self.config.root
        self.storage_options = self.config.storage_options
        self._fs: TrinityFileSystem | None = None

    @property
    def fs(self) -> TrinityFileSystem:
        if self._fs is None:
            from trinityfs.fs.spec import TrinityFileSystem

            self._fs = TrinityFileSystem(
                root=self.root, storage_options=self.storage_options, skip_instance_cache=True
            )
            if self.config.sources.get("verify") == "arguments":  # --verify
                self._fs.lake.verify = self.config.verify
        return self._fs

    @property
    def lake(self) -> Lakehouse:
        return self.fs.lake

    def committed(self, what: str, version: int | None, **extra: Any) -> None:
        """Report the outcome of one commit: `<what>: version N` or `<what>: no change`."""
        text = f"{what}: version {version}" if version is not None else f"{what}: no change"
        self.out.emit({"version": version, "changed": version is not None, **extra}, text)

    def confirm(self, question: str, refusal: str) -> None:
        """Go on with --yes, or when a terminal user answers y; else Refused(refusal)."""
        if getattr(self.args, "yes", False):
            return
        isatty = getattr(self.stdin, "isatty", lambda: False)
        if not isatty():
            raise Refused(f"{refusal}: add --yes (standard input is not a terminal to ask)")
        self.out.err.write(f"{question} [y/N] ")
        self.out.err.flush()
        answer = self.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            raise Refused(f"{refusal}: not confirmed, nothing changed")


def resolve_version(lake: Lakehouse, text: str) -> int:
    """The version a selector means (a number, 'latest', an export, an ISO-8601 time), by
    the catalog's one precedence (`Lakehouse.resolve`)."""
    return lake.resolve(str(text)).version


# -- exact names and patterns -------------------------------------------------------------

GLOB_CHARS = "*?["


def has_glob(path: str) -> bool:
    return any(c in path for c in GLOB_CHARS)


def expand(fs: TrinityFileSystem, paths: Sequence[str], glob: bool) -> list[str]:
    """With --glob, the paths each pattern matches (one-line error when one matches
    nothing); without, the paths exactly as given: names are never expanded."""
    if not glob:
        return list(paths)
    out: list[str] = []
    for pattern in paths:
        matches = sorted(fs.glob(pattern)) if has_glob(pattern) else [pattern]
        if not matches:
            raise FileNotFoundError(f"{pattern}: no match")
        out += matches
    return out


def add_glob_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-g",
        "--glob",
        action="store_true",
        help="treat * ? [ ] in the paths as patterns (without it they are part of the name)",
    )


__all__ = [
    "Context",
    "Refused",
    "UsageError",
    "add_glob_flag",
    "duration",
    "duration_text",
    "expand",
    "has_glob",
    "key_value",
    "resolve_version",
    "storage_options",
]
