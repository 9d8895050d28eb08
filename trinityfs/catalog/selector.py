"""Version selectors: the one reading of "which catalog version does this text mean".

Every front end (`trinity://v/<selector>/...`, the FUSE mount's `/v/<selector>`, the CLI's
`--version`/`diff`/`rollback` arguments, the Iceberg catalog's and the Spark source's
`version` option, the mount's `version=`) hands the text to `Lakehouse.resolve`, which
applies this precedence, first match wins:

1. ``latest``                the latest version (the only writable selection)
2. decimal ASCII digits      that version number (``007`` is version 7)
3. ``export:<name>``         the export named exactly <name> (any name, even ``3``,
                             ``latest``, a date, or one starting with ``export:``)
   ``time:<ISO-8601>``       the version current at that time, never an export
4. an export's name          that export (exports live in the latest LakehouseDef)
5. an ISO-8601 date or time  the version current at that time (UTC if no offset given)

Anything else is a VersionNotFoundError naming the accepted forms.

Why this order: digits and ``latest`` are never shadowed, so a version number always
means the version; a user who named an export ``2000-01-01`` meant the export, so bare
export names come before times, and ``time:`` reaches the time. The only exports a bare
name cannot reach are those named ``latest``, digits, or starting with ``export:`` or
``time:``: `export_selector` spells those as ``export:<name>``, and listings of the
selectors (`Lakehouse.selectors`, the ``/v`` directories) use it, so every listed entry
resolves to itself and nothing is listed twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from trinityfs.errors import InvalidArgumentError

LATEST = "latest"
EXPORT_PREFIX = "export:"
TIME_PREFIX = "time:"
MAX_VERSION_DIGITS = 20  # 2^64-1; int() refuses more than 4300 digits with a bare ValueError

How = Literal["latest", "version", "export", "time"]


@dataclass(frozen=True)
class Selection:
    """What a selector resolved to.

    version: the catalog version read (for an export, the version that was exported);
    how: which rule matched; read_only: False only for the latest version;
    export: the export's name; millis: the time asked for (rule "time").
    """

    selector: str
    how: How
    version: int
    read_only: bool
    export: str | None = None
    millis: int | None = None

    @property
    def is_latest(self) -> bool:
        return self.how == "latest"


@dataclass(frozen=True)
class Parsed:
    """A selector parsed without looking at the lakehouse (exports decided later)."""

    text: str
    how: Literal["latest", "version", "export", "label"]
    number: int | None = None
    name: str | None = None  # export name (rule 3) or the label text (rules 4-5)
    millis: int | None = None  # when the text (after time:) is an ISO-8601 time
    time_only: bool = False  # "time:..." never means an export


def parse_time(text: str) -> int | None:
    """Epoch millis of an ISO-8601 date or date-time (UTC if no offset), else None."""
    if not text or not text[0].isdigit() or len(text) < 8 or not text.isascii():
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return int(when.timestamp() * 1000)
    except (OverflowError, OSError, ValueError):
        return None


def parse_selector(selector: str | int) -> Parsed:
    """Parse a selector (rules 1-3 decided here; rules 4-5 need the export names)."""
    if isinstance(selector, bool) or not isinstance(selector, str | int):
        raise InvalidArgumentError(
            f"a version selector is text or a version number, not {type(selector).__name__}"
        )
    if isinstance(selector, int):
        if selector < 0:
            raise InvalidArgumentError(f"version numbers are >= 0, not {selector}")
        return Parsed(str(selector), "version", number=selector)
    text = selector
    if text == LATEST:
        return Parsed(text, "latest")
    if text.isascii() and text.isdigit():
        if len(text.lstrip("0")) > MAX_VERSION_DIGITS:
            raise InvalidArgumentError(
                f"version {_abbreviated(text)} is outside 0..2^64-1 ({len(text)} digits)"
            )
        return Parsed(text, "version", number=int(text.lstrip("0") or "0"))
    if text.startswith(EXPORT_PREFIX):
        name = text[len(EXPORT_PREFIX) :]
        if not name:
            raise InvalidArgumentError("'export:' needs an export name after the colon")
        return Parsed(text, "export", name=name)
    if text.startswith(TIME_PREFIX):
        when = text[len(TIME_PREFIX) :]
        millis = parse_time(when)
        if millis is None:
            raise InvalidArgumentError(
                f"{text!r}: after 'time:' comes an ISO-8601 date or time, e.g. "
                "time:2026-01-01 or time:2026-01-01T12:00:00Z"
            )
        return Parsed(text, "label", name=when, millis=millis, time_only=True)
    if not text:
        raise InvalidArgumentError("an empty version selector")
    return Parsed(text, "label", name=text, millis=parse_time(text))


def _abbreviated(text: str) -> str:
    return text if len(text) <= 32 else f"{text[:16]}...{text[-8:]}"


def export_selector(name: str) -> str:
    """The selector that resolves to the export `name` (its bare name when that is
    unambiguous, else ``export:<name>``); what listings of versions show."""
    parsed_as_export = (
        name != LATEST
        and not (name.isascii() and name.isdigit())
        and not name.startswith((EXPORT_PREFIX, TIME_PREFIX))
        and name != ""
    )
    return name if parsed_as_export else EXPORT_PREFIX + name


SELECTOR_FORMS = (
    "'latest', a version number, an export name (or export:<name>), "
    "or an ISO-8601 time (or time:<time>)"
)

__all__ = [
    "EXPORT_PREFIX",
    "LATEST",
    "SELECTOR_FORMS",
    "TIME_PREFIX",
    "Parsed",
    "Selection",
    "export_selector",
    "parse_selector",
    "parse_time",
]
