"""Helpers of the FUSE suites: real mounts in a subprocess (foreground), driven by tools.

The suites skip only when /dev/fuse or libfuse is missing (with that reason). They need
the shell tools of a Debian system plus `rsync` and `attr` (getfattr/setfattr): `.ci/run`
installs them with fuse3 and libfuse2. vim is used when installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trinityfs import Lakehouse

MOUNT_TIMEOUT = 30.0


def fuse_unavailable() -> str | None:
    """Why FUSE mounts cannot run here, or None (mfusepy itself missing is an error)."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (no FUSE device: load the fuse module or pass --device)"
    try:
        import mfusepy  # noqa: F401  (finds and loads libfuse when imported)
    except OSError as exc:
        return f"libfuse is missing ({exc}): apt-get install fuse3 libfuse2"
    return None


SKIP_REASON = fuse_unavailable()
# every FUSE test module: pytestmark = FUSE
FUSE = [
    pytest.mark.fuse,
    pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or ""),
]


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: apt-get install it (.ci/run does)")
    return path


def run(*cmd: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run a shell tool; fail with its output when it fails and `check`."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kwargs)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} -> {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def open_for_writing(path: Path) -> None:
    """open(path, "w") and close it (the OSError of either is the point)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.close(fd)


@dataclass
class Mount:
    root: str
    path: Path
    proc: subprocess.Popen
    log: Path

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def latest(self) -> int:
        return Lakehouse.open(self.root).latest_version()

    def unmount(self, how: str = "fusermount", timeout: float = 20.0) -> int:
        """Unmount by 'fusermount', 'SIGINT' or 'SIGTERM'; the process's exit status."""
        if self.proc.poll() is None:
            if how == "fusermount":
                subprocess.run(["fusermount", "-u", str(self.path)], check=False, timeout=30)
            else:
                self.proc.send_signal(getattr(signal, how))
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            if os.path.ismount(self.path):
                subprocess.run(["fusermount", "-u", "-z", str(self.path)], check=False)


def start_mount(root: str, mountpoint: Path, *args: str, env: dict | None = None) -> Mount:
    """`python -m trinityfs.fuse ROOT MOUNTPOINT --foreground ARGS` until it serves."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    log = mountpoint.parent / f"{mountpoint.name}.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trinityfs.fuse", root, str(mountpoint), "--foreground", *args],
            stdout=out,
            stderr=out,
            env={**os.environ, **(env or {})},
        )
    mount = Mount(root, mountpoint, proc, log)
    deadline = time.monotonic() + MOUNT_TIMEOUT
    while not os.path.ismount(mountpoint):
        if proc.poll() is not None:
            pytest.fail(f"the mount exited with {proc.returncode}:\n{mount.log_text()}")
        if time.monotonic() > deadline:
            mount.unmount("SIGTERM")
            pytest.fail(f"not mounted after {MOUNT_TIMEOUT}s:\n{mount.log_text()}")
        time.sleep(0.02)
    return mount


@contextlib.contextmanager
def mounted(root: str, mountpoint: Path, *args: str, env: dict | None = None) -> Iterator[Mount]:
    mount = start_mount(root, mountpoint, *args, env=env)
    try:
        yield mount
    finally:
        mount.unmount()


def populate(root: str) -> Lakehouse:
    """A catalog over versions 1 (sales), 2 (orders, customers), 3 (big_orders view,
    customers replaced), 4 (hr), 5 (hr.people)."""
    lake = Lakehouse.create(root)
    lake.create_namespace("sales", {"owner": "analytics", "tier": "gold"})
    with lake.transaction() as txn:
        txn.create_table("sales", "orders", {"table_format": "ICEBERG"})
        txn.create_table("sales", "customers", {"table_format": "DELTA"})
    with lake.transaction() as txn:
        txn.create_view("sales", "big_orders", {"properties": {"sql": "select * from orders"}})
        txn.replace_table("sales", "customers", {"table_format": "ICEBERG"})
    lake.create_namespace("hr")
    lake.create_table("hr", "people", {"table_format": "HUDI", "properties": {"pii": "yes"}})
    return lake
