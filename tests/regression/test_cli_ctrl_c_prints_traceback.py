"""Issue 11 item 7: Ctrl-C in the first half second of `trinityfs` (while Python loads the
catalog and pyarrow) printed a 20-line traceback."""

from __future__ import annotations

import signal
import time

from regression_cli import process, run

# delays after the start of the process: during the imports, and while the command runs
DELAYS = (0.3, 0.45, 0.6, 0.8, 1.0, 1.3)


def test_ctrl_c_at_any_moment_is_one_line_and_status_130(tmp_path):
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    interrupted = 0
    for delay in DELAYS:
        proc = process(root, "log")
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        text = err.decode()
        assert "Traceback" not in text, (delay, text)
        if proc.returncode == 130:
            interrupted += 1
            assert text == "trinityfs: interrupted\n", (delay, text)
        elif proc.returncode == -signal.SIGINT:
            # before the interpreter installs its handler: killed silently, as by the shell
            assert text == "", (delay, text)
        else:
            assert proc.returncode == 0 and text == "", (delay, proc.returncode, text)
    assert interrupted >= 2  # the early signals land before the command is done
