"""Output of the trinityfs command: aligned tables for people, JSON for scripts, and a
tiny progress bar on stderr (only when stderr is a terminal)."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO


def json_default(value: Any) -> Any:
    """JSON for values the standard encoder does not know (datetimes, dataclasses, sets)."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=json_default)


def millis_to_text(millis: int | None) -> str:
    if millis is None:
        return "-"
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat(timespec="milliseconds")


def human_bytes(size: int) -> str:
    """`512 B`, `1.5 KiB`, `3.2 MiB`."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str] | None = None) -> list[str]:
    """Rows as left-aligned columns separated by two spaces (the last column unpadded)."""
    text_rows = [["" if cell is None else str(cell) for cell in row] for row in rows]
    if headers:
        text_rows.insert(0, list(headers))
    if not text_rows:
        return []
    widths = [max(len(row[i]) for row in text_rows) for i in range(len(text_rows[0]))]
    lines = []
    for row in text_rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return lines


class Output:
    """Where a command writes: `emit` prints JSON (--json) or the human lines."""

    def __init__(self, json_mode: bool, out: TextIO | None = None, err: TextIO | None = None):
        self.json = json_mode
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def emit(self, data: Any, lines: Iterable[str] | str = ()) -> None:
        if self.json:
            self.out.write(dumps(data) + "\n")
            return
        if isinstance(lines, str):
            lines = [lines]
        for line in lines:
            self.out.write(line + "\n")

    def write_bytes(self, data: bytes) -> None:
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None:
            self.out.flush()
            buffer.write(data)
            buffer.flush()
        else:
            self.out.write(data.decode("utf-8", "replace"))

    def progress(self, label: str, total: int | None = None) -> Progress:
        return Progress(label, total, self.err)


class Progress:
    """`[#####.....] 50/100 label` redrawn in place on stderr; silent unless a terminal."""

    WIDTH = 30
    MIN_INTERVAL = 0.1

    def __init__(self, label: str, total: int | None, stream: TextIO):
        self.label = label
        self.total = total
        self.stream = stream
        self.done = 0
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._last = 0.0
        self._drawn = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, done: int | None = None, total: int | None = None, step: int = 1) -> None:
        self.done = self.done + step if done is None else done
        if total is not None:
            self.total = total
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self.MIN_INTERVAL and self.done != self.total:
            return
        self._last = now
        if self.total:
            filled = min(self.WIDTH, self.WIDTH * self.done // max(self.total, 1))
            bar = "#" * filled + "." * (self.WIDTH - filled)
            text = f"\r[{bar}] {self.done}/{self.total} {self.label}"
        else:
            text = f"\r{self.done} {self.label}"
        self.stream.write(text)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False


__all__ = [
    "Output",
    "Progress",
    "dumps",
    "human_bytes",
    "json_default",
    "millis_to_text",
    "table",
]
