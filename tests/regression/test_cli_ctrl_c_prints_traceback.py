"""Issue 11 item 7: Ctrl-C in the first half second of `trinityfs` (while Python loads the
catalog and pyarrow) printed a 20-line traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from regression_cli import process, run

import trinityfs

# a sweep of moments after the interpreter's own start-up: during trinityfs's imports and
# while it runs
DELAYS = (0.05, 0.15, 0.3, 0.5, 0.8, 1.2)
# then, until two signals have interrupted the command, bisect between the latest moment
# that was too early and the earliest that was too late: one start-up measurement is not
# enough on CI's 2 loaded cores (a slow measurement put every moment after the command)
MAX_BISECTIONS = 40


def _seconds(root: str | None = None) -> float:
    """How long a bare interpreter (or, with `root`, the whole command) takes here."""
    started = time.monotonic()
    if root is None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    else:
        assert process(root, "log").wait(timeout=60) == 0
    return time.monotonic() - started


def _ran_package_code(text: str) -> bool:
    """A traceback frame inside the trinityfs package (not merely a path through a
    checkout or venv that happens to be named trinityfs)."""
    return os.path.dirname(trinityfs.__file__) + os.sep in text


def _sigint_as_at_a_terminal() -> None:
    """In the child before exec: SIGINT's default disposition, as a shell gives a command.
    A disposition of SIG_IGN is inherited across exec and Python then installs no
    KeyboardInterrupt handler: a test run started as a background job (which a shell
    starts with SIGINT ignored) would send every signal to a command that ignores it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(root: str, delay: float) -> str:
    """Send SIGINT to `trinityfs log` after `delay` s and check what it printed; returns
    "early" (no trinityfs code ran yet), "interrupted" or "late" (it had finished)."""
    proc = process(root, "log", preexec_fn=_sigint_as_at_a_terminal)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    text = err.decode()
    if "init_import_site" in text:
        return "early"  # still in Python's own start-up (site.py)
    if "Traceback" in text and not _ran_package_code(text):
        return "early"  # runpy still looking up the module (frozen frames only)
    assert "Traceback" not in text, (delay, text)
    if proc.returncode == 130:
        assert text == "trinityfs: interrupted\n", (delay, text)
        return "interrupted"
    if proc.returncode == -signal.SIGINT:
        # killed by SIGINT (a shell shows status 130 too): before the interpreter set up
        # its handler (silent), or on its way out after the one line
        assert text in ("", "trinityfs: interrupted\n"), (delay, text)
        return "early" if text == "" else "interrupted"
    assert proc.returncode == 0 and text == "", (delay, proc.returncode, text)
    return "late"


def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path):
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    startup = _seconds()
    outcomes = [_interrupt(root, startup + d) for d in DELAYS]
    interrupted = outcomes.count("interrupted")
    early, late = 0.0, max(_seconds(root=root), startup + DELAYS[-1]) * 2
    for _ in range(MAX_BISECTIONS):
        if interrupted >= 2:
            break
        delay = (early + late) / 2
        outcome = _interrupt(root, delay)
        if outcome == "early":
            early = delay
        elif outcome == "late":
            late = delay
        else:
            interrupted += 1
    assert interrupted >= 2, (outcomes, early, late, signal.getsignal(signal.SIGINT))
