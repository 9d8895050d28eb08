"""Mount modes and lifecycles: read-only, --version, --at, clean unmount by SIGINT, SIGTERM
and fusermount -u, --daemon, `mount -t fuse.trinityfs` with the helper, an fstab line,
libfuse 3, and the wiring of `trinityfs mount` into the trinityfs command."""

from __future__ import annotations

import argparse
import contextlib
import ctypes.util
import errno
import importlib
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fuse_helpers import FUSE, Mount, open_for_writing, populate, run
from lake_fixtures import flip

from trinityfs import Lakehouse

pytestmark = FUSE

REPO = Path(__file__).resolve().parents[2]
HELPER = REPO / "mount" / "mount.fuse.trinityfs"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("modes") / "lake")
    populate(path)
    return path


def wait_unmounted(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while os.path.ismount(path):
        assert time.monotonic() < deadline, f"{path} still mounted"
        time.sleep(0.05)


def test_verify_tree_mount_refuses_a_commit_over_damage_it_never_reads(
    tmp_path: Path, make_mount, monkeypatch
) -> None:
    """--verify tree (or -o verify=tree): a commit through the mount verifies the whole
    tree first, so a rotten definition of another table refuses mkdir with EIO, naming the
    file in the log, and nothing is committed; the default mount carries the damage."""
    monkeypatch.delenv("TRINITYFS_VERIFY", raising=False)
    root = str(tmp_path / "lake")
    lake = populate(root)
    victim = lake.snapshot().object_location("table", "hr", "people")
    flip(Path(root) / victim)
    latest = lake.latest_version()
    for number, args in enumerate((["--verify", "tree"], ["-o", "verify=tree"])):
        m: Mount = make_mount(root, *args, name=f"strict{number}")
        with pytest.raises(OSError) as info:
            os.mkdir(m.path / "ns2")
        assert info.value.errno == errno.EIO, args
        assert m.latest() == latest
        assert not (m.path / "ns2").exists()
        m.unmount()
        assert victim.rpartition("/")[2] in m.log_text(), m.log_text()
    m = make_mount(root, name="default")
    os.mkdir(m.path / "ns2")  # what --verify tree is for: reads mode does not look
    assert m.latest() == latest + 1


def test_read_only_mount(root: str, make_mount) -> None:
    m: Mount = make_mount(root, "--read-only")
    assert sorted(os.listdir(m.path / "sales")) == ["big_orders", "customers", "orders"]
    assert stat_mode(m.path / "sales" / "orders") == 0o444
    before = m.latest()
    for attempt in (
        lambda: open_for_writing(m.path / "sales" / "orders"),
        lambda: open_for_writing(m.path / "sales" / "new"),
        lambda: os.unlink(m.path / "sales" / "orders"),
        lambda: os.mkdir(m.path / "ns"),
        lambda: os.rename(m.path / "sales" / "orders", m.path / "sales" / "o"),
        lambda: os.setxattr(m.path / "sales", "user.x", b"1"),
    ):
        with pytest.raises(OSError) as info:
            attempt()
        assert info.value.errno == errno.EROFS
    assert m.latest() == before
    assert "ro," in run("findmnt", "-n", "-o", "OPTIONS", str(m.path)).stdout + ","


def stat_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_version_and_at_mounts_show_that_version_read_only(root: str, make_mount) -> None:
    m = make_mount(root, "--version", "2", name="v2")
    assert sorted(os.listdir(m.path / "sales")) == ["customers", "orders"]
    assert os.listdir(m.path) == ["sales"]
    with pytest.raises(OSError) as info:
        open_for_writing(m.path / "sales" / "x")
    assert info.value.errno == errno.EROFS
    assert sorted(os.listdir(m.path / "v" / "latest")) == ["hr", "sales"]  # history stays
    when = Lakehouse.open(root).version_info(3).created_at_millis
    at = datetime.fromtimestamp(when / 1000, UTC).isoformat(timespec="milliseconds")
    m3 = make_mount(root, "--at", at, name="at3")
    assert sorted(os.listdir(m3.path / "sales")) == ["big_orders", "customers", "orders"]
    assert os.listdir(m3.path) == ["sales"]  # hr came in version 4
    # the same through -o, as fstab gives it
    m4 = make_mount(root, "-o", "version=4", name="o4")
    assert sorted(os.listdir(m4.path)) == ["hr", "sales"]
    assert os.listdir(m4.path / "hr") == []


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "fusermount"])
def test_clean_unmount(root: str, make_mount, how: str) -> None:
    m: Mount = make_mount(root, name=f"u-{how}")
    assert os.listdir(m.path / "sales")
    start = time.monotonic()
    assert m.unmount(how) == 0, m.log_text()
    assert time.monotonic() - start < 10
    assert not os.path.ismount(m.path)
    assert "unmounted" in m.log_text() and "Traceback" not in m.log_text()


def test_unmount_while_a_file_is_being_written_commits_nothing(root: str, make_mount) -> None:
    m: Mount = make_mount(root, name="pending")
    before = m.latest()
    f = open(m.path / "hr" / "half", "w")  # noqa: SIM115
    f.write('{"kind": "table"')  # an unfinished write, never closed
    f.flush()
    assert m.unmount("SIGTERM") == 0
    with contextlib.suppress(OSError):
        f.close()  # the mount is gone: the bytes were never committed
    assert Lakehouse.open(root).latest_version() == before
    assert "hr/half was still open for writing at unmount: not committed" in m.log_text()


def test_daemon_mode(root: str, tmp_path: Path) -> None:
    mnt = tmp_path / "daemon"
    mnt.mkdir()
    log = tmp_path / "daemon.log"
    result = run(
        sys.executable, "-m", "trinityfs.fuse", root, str(mnt), "--daemon", "-o", f"ro,log={log}"
    )
    try:
        assert os.path.ismount(mnt)  # mounted before the command returned
        assert "mounted" in result.stderr
        assert sorted(os.listdir(mnt / "sales")) == ["big_orders", "customers", "orders"]
    finally:
        subprocess.run(["fusermount", "-u", str(mnt)], check=False)
    wait_unmounted(mnt)
    deadline = time.monotonic() + 10
    while "unmounted" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def test_mount_errors_are_one_line(tmp_path: Path) -> None:
    mnt = tmp_path / "m"
    mnt.mkdir()
    for args in (
        [str(tmp_path / "nolake"), str(mnt)],
        [str(tmp_path / "nolake"), str(mnt), "--daemon"],
        [str(tmp_path), str(tmp_path / "missing-dir")],
        [str(tmp_path), str(mnt), "--at", "yesterday"],
    ):
        result = run(sys.executable, "-m", "trinityfs.fuse", *args, check=False)
        assert result.returncode == 1, result
        lines = result.stderr.strip().splitlines()
        assert lines[-1].startswith("trinityfs mount: "), result.stderr
        assert "Traceback" not in result.stderr
    assert not os.path.ismount(mnt)


def test_mount_t_fuse_trinityfs_and_an_fstab_line(root: str, tmp_path: Path) -> None:
    """The helper installed as /sbin/mount.fuse.trinityfs (where mount(8) looks)."""
    if os.geteuid() != 0:
        pytest.skip("installing a mount(8) helper in /sbin needs root")
    target = Path("/sbin/mount.fuse.trinityfs")
    if target.exists() and target.read_bytes() != HELPER.read_bytes():
        pytest.skip(f"{target} exists and is not this helper: left alone")
    installed = not target.exists()
    shutil.copy(HELPER, target)
    target.chmod(0o755)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    python = f"python={sys.executable}"
    try:
        run("mount", "-t", "fuse.trinityfs", "-o", f"ro,{python}", root, str(mnt))
        assert os.path.ismount(mnt)
        fstype = run("findmnt", "-n", "-o", "FSTYPE,SOURCE", str(mnt)).stdout.split()
        assert fstype == ["fuse.trinityfs", root]
        assert sorted(os.listdir(mnt / "sales")) == ["big_orders", "customers", "orders"]
        with pytest.raises(OSError) as info:
            open_for_writing(mnt / "sales" / "x")
        assert info.value.errno == errno.EROFS
        run("umount", str(mnt))
        wait_unmounted(mnt)
        # an /etc/fstab line (mount -T reads another fstab file)
        fstab = tmp_path / "fstab"
        fstab.write_text(f"{root}  {mnt}  fuse.trinityfs  noauto,_netdev,version=2,{python}  0 0\n")
        run("mount", "-T", str(fstab), str(mnt))
        assert sorted(os.listdir(mnt / "sales")) == ["customers", "orders"]
        run("fusermount", "-u", str(mnt))
        wait_unmounted(mnt)
    finally:
        if os.path.ismount(mnt):
            subprocess.run(["umount", "-l", str(mnt)], check=False)
        if installed:
            target.unlink()


def test_libfuse3(root: str, make_mount) -> None:
    if ctypes.util.find_library("fuse3") is None:
        pytest.skip("libfuse3 is missing (apt-get install fuse3)")
    m: Mount = make_mount(root, name="fuse3", env={"FUSE_LIBRARY_NAME": "fuse3"})
    assert "libfuse 3." in m.log_text()
    before = m.latest()
    (m.path / "hr" / "f3").write_text('{"kind": "table", "definition": {"table_type": "a"}}')
    assert m.latest() == before + 1
    run("sed", "-i", 's/table_type": "a/table_type": "b/', str(m.path / "hr" / "f3"))
    assert m.latest() == before + 2
    assert Lakehouse.open(root).describe_table("hr", "f3").table_type == "b"
    with open(m.path / "hr" / "f3", "r+") as f:  # O_RDWR, then ftruncate through a handle
        text = f.read()
        f.seek(0)
        f.truncate()
        f.write(text.replace('"b"', '"c"'))
    assert m.latest() == before + 3
    os.rename(m.path / "hr" / "f3", m.path / "hr" / "f4")
    assert m.latest() == before + 4
    os.unlink(m.path / "hr" / "f4")
    assert sorted(os.listdir(m.path / "sales")) == ["big_orders", "customers", "orders"]


def test_the_trinityfs_command_runs_mount(root: str, tmp_path: Path) -> None:
    """`trinityfs mount` as wired into the command: add_mount_parser + func(ctx, args)."""
    from trinityfs.fuse.mount import add_mount_parser

    cli = importlib.import_module("trinityfs.cli.app")

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "mount" not in sub.choices:
        add_mount_parser(sub)
    mnt = tmp_path / "cli"
    mnt.mkdir()
    args = parser.parse_args(["mount", root, str(mnt), "--daemon", "--read-only"])
    ctx = cli.Context(args, None)
    try:
        assert args.func(ctx, args) == 0
        assert os.path.ismount(mnt)
        assert sorted(os.listdir(mnt / "hr")) == ["people"]
    finally:
        subprocess.run(["fusermount", "-u", str(mnt)], check=False)
    wait_unmounted(mnt)
