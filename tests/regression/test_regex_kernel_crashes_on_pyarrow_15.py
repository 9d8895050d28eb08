"""CI's lower-bounds job died with SIGSEGV (exit 139): pyarrow 15.x's
`pyarrow.compute.match_substring_regex` crashes the interpreter on this machine's CPU for
any pattern, and the node file encoder and decoder run it over columns of 256 or more
values (the unsafe-location check). pyproject's lower bound is now pyarrow 16, the first
release whose kernel runs here; this test runs the node encoder's check over a large
column in a child process, so a crash is a test failure instead of the end of the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]

_CHILD = textwrap.dedent(
    """
    from trinityfs.format.nodefile import NodeFile
    from trinityfs.format.node_encode import encode_node
    from trinityfs.format.node_decode import decode_node

    buffer = [(f"key{i:06d}", f"defs/value{i}", 1) for i in range(2_000)]
    buffer.append(("key999999", "../escape", 1))
    node = NodeFile(system={"created_at_millis": "1"}, buffer=buffer)
    try:
        encode_node(node, 16)
    except Exception as exc:
        print(type(exc).__name__, "message", 2000 if "2000" in str(exc) else str(exc))
    node.buffer = buffer[:-1]
    print(len(decode_node(encode_node(node, 16), 16, "node.arrow").buffer))
    """
)


def test_unsafe_location_check_over_a_large_column_runs_in_this_pyarrow():
    child = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120
    )
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.split("\n")[:2] == ["InvalidArgumentError message 2000", "2000"]


def test_pyarrow_lower_bound_is_past_the_crashing_releases():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (pyarrow,) = [Requirement(d) for d in project["dependencies"] if d.startswith("pyarrow")]
    lows = [Version(s.version) for s in pyarrow.specifier if s.operator == ">="]
    assert lows and min(lows) >= Version("16")
