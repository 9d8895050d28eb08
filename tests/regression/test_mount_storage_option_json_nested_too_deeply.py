"""A mount's storage option holding JSON nested deeper than the parser's recursion limit
(`-o storage.key=[[[[...`, or TRINITYFS_STORAGE_OPTIONS) crashed `trinityfs mount` with a
RecursionError traceback; now it is a one-line MountError naming the option."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from trinityfs import Lakehouse
from trinityfs.fuse.mount import MountConfig, MountError, config_from_args, open_lakehouse

DEEP = "[" * 50_000 + "]" * 50_000  # 100 kB: below the 128 kB limit of one argv string


def args(*options: str) -> argparse.Namespace:
    return argparse.Namespace(mount_root="lake", mountpoint="mnt", options=list(options))


def test_storage_option_nested_too_deeply_is_a_mount_error() -> None:
    with pytest.raises(MountError, match=r"storage\.key: .*nested too deeply"):
        config_from_args(args(f"storage.key={DEEP}"))


def test_plain_and_json_storage_values_still_parse() -> None:
    cfg = config_from_args(args("storage.endpoint_url=http://x:1", "storage.n=3"))
    assert cfg.storage_options == {"endpoint_url": "http://x:1", "n": 3}


def test_environment_storage_options_nested_too_deeply(tmp_path, monkeypatch) -> None:
    root = str(tmp_path / "lake")
    Lakehouse.create(root)
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", DEEP)
    with pytest.raises(MountError, match="nested too deeply"):
        open_lakehouse(MountConfig(root=root, mountpoint=str(tmp_path)))


def test_the_command_prints_one_line(tmp_path) -> None:
    (tmp_path / "mnt").mkdir()
    command = [sys.executable, "-m", "trinityfs.fuse", str(tmp_path / "lake")]
    proc = subprocess.run(
        [*command, str(tmp_path / "mnt"), "-o", f"storage.key={DEEP}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "nested too deeply" in proc.stderr
