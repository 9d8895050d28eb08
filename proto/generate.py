"""Regenerate trinityfs/format/trinitylake_pb2.py (and .pyi) from proto/trinitylake.proto.

Usage (from anywhere):  .venv/bin/python proto/generate.py [--out DIR]

The generated module is checked in; tests/test_proto_generated.py runs this script into a
temporary directory and fails if the output differs from the checked-in files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent
PROTO_FILE = "trinitylake.proto"
DEFAULT_OUT = PROTO_DIR.parent / "trinityfs" / "format"
GENERATED = ("trinitylake_pb2.py", "trinitylake_pb2.pyi")


def generate(out_dir: Path) -> list[Path]:
    """Run the protoc bundled with grpc_tools; return the generated files."""
    from grpc_tools import protoc

    out_dir.mkdir(parents=True, exist_ok=True)
    # -I is the proto directory itself so the descriptor records just "trinitylake.proto",
    # whatever the working directory: the output must not depend on where this runs.
    status = protoc.main(
        [
            "protoc",
            f"-I{PROTO_DIR}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            str(PROTO_DIR / PROTO_FILE),
        ]
    )
    if status != 0:
        raise RuntimeError(f"protoc failed with status {status}")
    return [out_dir / name for name in GENERATED]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
