"""Issue 11 item 9: pyproject pinned protobuf>=5.26 while the checked-in gencode refuses any
runtime older than the protoc that generated it (with 5.29 `import trinityfs` failed).

The lower bounds must be what the code needs: here the protobuf bound is derived from the
gencode itself, and .ci/constraints-lower.txt (what CI's lower-bounds job installs and tests
against) must name exactly pyproject's lower bounds, so the job checks the real pins."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]


def _lower_bounds() -> dict[str, Version]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    bounds = {}
    for text in project["dependencies"]:
        requirement = Requirement(text)
        lows = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==")]
        assert lows, f"{text}: every dependency needs a tested lower bound"
        bounds[requirement.name] = max(lows)
    return bounds


def _gencode_version() -> Version:
    source = (REPO / "trinityfs" / "format" / "trinitylake_pb2.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "ValidateProtobufRuntimeVersion"
        ):
            major, minor, patch = (ast.literal_eval(a) for a in node.args[1:4])
            return Version(f"{major}.{minor}.{patch}")
    raise AssertionError("no runtime version check in the gencode")


def test_protobuf_lower_bound_is_the_gencode_runtime_version():
    assert _lower_bounds()["protobuf"] >= _gencode_version()


def test_lower_bounds_job_installs_exactly_the_pins():
    constraints = {}
    for line in (REPO / ".ci" / "constraints-lower.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = re.split(r"==", line)
            constraints[name.strip()] = Version(version.strip())
    assert constraints == _lower_bounds()
