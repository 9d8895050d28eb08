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

# after the interpreter's own start-up: during trinityfs's imports and while it runs
DELAYS = (0.05, 0.15, 0.3, 0.5, 0.8, 1.2)
# under load (CI runs every suite on 2 cores) the windows stretch: keep signalling later
# until the command finishes before the signal, at most this many extra tries
EXTRA_STEP, EXTRA_TRIES = 0.4, 25


def _startup_seconds() -> float:
    """How long the bare interpreter takes to start here (site, .pth files)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - started


def _delays(startup: float):
    yield from (startup + d for d in DELAYS)
    for n in range(1, EXTRA_TRIES + 1):
        yield startup + DELAYS[-1] + n * EXTRA_STEP


def _ran_package_code(text: str) -> bool:
    """A traceback frame inside the trinityfs package (not merely a path through a
    checkout or venv that happens to be named trinityfs)."""
    return os.path.dirname(trinityfs.__file__) + os.sep in text


def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path):
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    interrupted = 0
    for tried, delay in enumerate(_delays(_startup_seconds())):
        extra = tried >= len(DELAYS)
        if extra and interrupted >= 2:
            break
        proc = process(root, "log")
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        text = err.decode()
        if "init_import_site" in text:
            continue  # still in Python's own start-up (site.py): no trinityfs code ran yet
        if "Traceback" in text and not _ran_package_code(text):
            # runpy still looking up the module (frozen runpy/importlib frames only, seen
            # under load when start-up took longer than measured): no trinityfs code ran yet
            continue
        assert "Traceback" not in text, (delay, text)
        if proc.returncode == 130:
            interrupted += 1
            assert text == "trinityfs: interrupted\n", (delay, text)
        elif proc.returncode == -signal.SIGINT:
            # killed by SIGINT (a shell shows status 130 too): before the interpreter set up
            # its handler (silent), or on its way out after the one line
            assert text in ("", "trinityfs: interrupted\n"), (delay, text)
        else:
            assert proc.returncode == 0 and text == "", (delay, proc.returncode, text)
            if extra:
                break  # the command now finishes before the signal: later tries would too
    assert interrupted >= 2  # the early signals land before the command is done
