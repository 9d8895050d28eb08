"""The one place where the command turns exceptions into its one-line messages.

Errors come from the catalog API and the filesystem, worded for Python callers
(`use cascade`, `recursive=True`, `drop_export('x')`, `max_age_millis`). `message` words
them for a shell user; every command's error passes through it (`main` calls it).
"""

from __future__ import annotations

import re


class UsageError(Exception):
    """A command line that does not parse or asks for something contradictory (exit 2)."""


class Refused(Exception):
    """The command declined to do something destructive (no --yes, a foreign folder)."""


class InputError(ValueError):
    """Input the command reads (a file, stdin) that it cannot use; says where (exit 1)."""


# API wording -> CLI wording, applied in order (regular expressions)
_CLI_WORDS: tuple[tuple[str, str], ...] = (
    (r"drop_export\((['\"])(.*?)\1\)", r"'trinityfs drop-export \2'"),
    (r"drop them first or use cascade", "remove them first, or use 'rm -r'"),
    (r"\buse cascade\b", "use 'rm -r'"),
    (r"\bcascade=True\b", "'rm -r'"),
    (r"use rmdir, or rm with recursive=True", "use 'rmdir', or 'rm -r'"),
    (r"\brm with recursive=True\b", "'rm -r'"),
    (r"use recursive=True", "use 'rm -r'"),
    (r"\brecursive=True\b", "-r"),
    (r"\bexist_ok=True\b", "--exist-ok"),
    (r"\bmax_age_millis\b", "--max-age"),
    (r"\bmin_versions\b", "--min-versions"),
    (r"\bgrace_millis\b", "--grace"),
    (r"\bttl_millis\b", "--ttl"),
    (r"\blease_millis\b", "--lease"),
    (r"must be an int >= (\d+), got", r"must be at least \1, got"),
)


def cli_words(text: str) -> str:
    """`text` with the API's words replaced by the command's."""
    for pattern, replacement in _CLI_WORDS:
        text = re.sub(pattern, replacement, text)
    return text


def message(exc: BaseException) -> str:
    """One line for `exc`, in the command's words."""
    from trinityfs.fs.errors import message_of

    text = str(exc) if isinstance(exc, UsageError | Refused) else message_of(exc)
    return " ".join(cli_words(text).split())


__all__ = ["InputError", "Refused", "UsageError", "cli_words", "message"]
