"""The checked-in generated protobuf module must be exactly what proto/generate.py makes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GENERATED = ("trinitylake_pb2.py", "trinitylake_pb2.pyi")


def test_generated_module_is_up_to_date(tmp_path):
    pytest.importorskip("grpc_tools", reason="grpc_tools (grpcio-tools) is not installed")
    subprocess.run(
        [sys.executable, str(REPO / "proto" / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=tmp_path,  # output must not depend on the working directory
    )
    for name in GENERATED:
        checked_in = (REPO / "trinityfs" / "format" / name).read_bytes()
        assert (tmp_path / name).read_bytes() == checked_in, (
            f"trinityfs/format/{name} is stale: run `python proto/generate.py`"
        )
