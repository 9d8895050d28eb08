"""Temporary files of editors and tools, kept in the mount's memory (never committed).

Editors and tools save a file by writing a temporary file in the same directory and
renaming it over the target (`sed -i` writes `sedXXXXXX`, vim probes with `4913` and
keeps `.name.swp` and `name~`, rsync writes `.name.XXXXXX`, Python's `tempfile` writes
`tmpXXXXXXXX`). A file created with such a name is a *scratch file*: it lives in the
mount process only, may hold anything (swap files are binary), and is listed in its
namespace directory by this mount alone. Renaming it onto a real name commits its
content as that table or view (one commit; EINVAL and nothing committed when it is not a
definition). An existing table or view is never a scratch file, whatever its name.
"""

from __future__ import annotations

import fnmatch
import re
import time
from dataclasses import dataclass, field

# Globs matched against the file name (not the path). fnmatch syntax: * ? [seq].
DEFAULT_PATTERNS: tuple[str, ...] = (
    ".*",  # hidden: vim .x.swp, rsync .x.XXXXXX, emacs .#x, gedit .goutputstream-XXXXXX
    "*~",  # backups: vim, emacs, nano
    "#*#",  # emacs auto-save
    "*.swp",
    "*.swo",
    "*.swx",
    "*.swpx",
    "*.tmp",
    "*.temp",
    "sed??????",  # GNU sed -i
    "tmp????????",  # Python tempfile.mkstemp / NamedTemporaryFile
)

_VIM_PROBE = re.compile(r"\d{4,6}")


def parse_patterns(text: str) -> tuple[str, ...]:
    """Patterns from a colon-separated option value ("" keeps none, "+a:b" adds to the defaults)."""
    if text.startswith("+"):
        return DEFAULT_PATTERNS + tuple(p for p in text[1:].split(":") if p)
    return tuple(p for p in text.split(":") if p)


def is_vim_probe(name: str) -> bool:
    """vim's writability probe: 4913, then 5036, 5159, ... (steps of 123) while taken."""
    return bool(_VIM_PROBE.fullmatch(name)) and int(name) >= 4913 and (int(name) - 4913) % 123 == 0


def is_scratch_name(name: str, patterns: tuple[str, ...] = DEFAULT_PATTERNS) -> bool:
    """Whether a new file of this name is a scratch file rather than a table or view."""
    if is_vim_probe(name):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@dataclass
class Origin:
    """The table or view a scratch file was renamed from (`mv t t~`, as vim does).

    The object stays in the catalog but is hidden in this mount until a new file of
    that name is committed (the editor's save) or the scratch file is renamed back.
    Deleting the scratch file while the object is still hidden drops the object.
    """

    kind: str
    location: str
    base_version: int


@dataclass
class ScratchFile:
    """A temporary file held in memory by the mount."""

    data: bytearray = field(default_factory=bytearray)
    mtime_ns: int = field(default_factory=time.time_ns)
    mode: int = 0o644
    origin: Origin | None = None
    # (atime, mtime) set by utimens after the last write (`rsync -t` sets the source's
    # before renaming the file over the target): the saved object shows them (times.py)
    set_times: tuple[int, int] | None = None

    def touch(self) -> None:
        self.mtime_ns = time.time_ns()
        self.set_times = None


__all__ = [
    "DEFAULT_PATTERNS",
    "Origin",
    "ScratchFile",
    "is_scratch_name",
    "is_vim_probe",
    "parse_patterns",
]
