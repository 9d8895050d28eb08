"""A call that must return in time: for files a reader could wait on forever (a FIFO
planted in the lakehouse, opened for reading without O_NONBLOCK)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def within(seconds: float, run: Callable[[], T]) -> T:
    """run() in a daemon thread: its result or its exception; the test fails if it has
    not returned within `seconds`."""
    result: list[tuple[str, object]] = []

    def target() -> None:
        try:
            result.append(("ok", run()))
        except BaseException as exc:  # handed to the test
            result.append(("error", exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"still running after {seconds} s (blocked on a FIFO?)"
    kind, value = result[0]
    if kind == "error":
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
