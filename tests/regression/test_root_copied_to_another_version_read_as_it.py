"""Regression: a root node file copied (or renamed, restored from a backup, planted) to
the name of another version was read as that version: a silent wrong answer.

Found 2026-11-24 (helper adversary): with root 2 copied to the name of version 1000 and
the hint saying 1000 (a storage that lies: a file "from the future"), a cold reader
answered "latest is 1000" with version 2's tables, and a commit built on it; root 2
copied to the next version's name (no hint needed) did the same at version 7. The
root names the root before it (`previous_root`, FORMAT.md section 4: absent only in
version 0), so the decoder now checks that the root of version v names version v-1
(and version 0 none): a CorruptFileError naming the file otherwise, through every
front end (fsspec and FUSE EIO, the CLI one line and a non-zero status, REST 500 with
the spec's error JSON), and nothing is committed on it. Fails on e0c4099.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.paths import LATEST_HINT, root_node_file
from trinityfs.fs import TrinityFileSystem

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuse"))
from fuse_helpers import SKIP_REASON

NO_FSYNC = {"fsync": False}


def _build(root: Path) -> None:
    """Versions 0 (empty), 1 (namespace ns), 2..6 (tables t0..t4)."""
    lake = Lakehouse.create(str(root), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    for i in range(5):
        lake.create_table("ns", f"t{i}", {"properties": {"i": str(i)}})


def _plant(root: Path, source: int, target: int, hint: int | None = None) -> str:
    shutil.copyfile(root / root_node_file(source), root / root_node_file(target))
    if hint is not None:
        (root / LATEST_HINT).write_text(f"{hint}\n")
    return root_node_file(target)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "lake"
    _build(path)
    return path


@pytest.mark.parametrize(
    ("source", "target", "hint"),
    [(2, 1000, 1000), (2, 7, None), (0, 7, None), (6, 7, None)],
    ids=["from-the-future-with-hint", "next-version", "version-0-as-next", "latest-as-next"],
)
def test_a_root_planted_under_another_version_is_corrupt_not_read(root, source, target, hint):
    planted = _plant(root, source, target, hint)
    lake = Lakehouse.open(str(root), storage_options=NO_FSYNC)
    with pytest.raises(CorruptFileError) as caught:
        lake.list_tables("ns")
    assert planted in str(caught.value) and "previous_root" in str(caught.value)
    with pytest.raises(CorruptFileError):
        lake.create_table("ns", "new", {})  # nothing is committed on top of it
    assert not (root / root_node_file(target + 1)).exists()


def test_a_root_replaced_by_an_older_one_is_corrupt_when_pinned(root):
    (root / root_node_file(5)).unlink()
    planted = _plant(root, 4, 5)
    lake = Lakehouse.open(str(root), storage_options=NO_FSYNC)
    with pytest.raises(CorruptFileError, match=planted):
        lake.at(5).list_tables("ns")
    assert lake.at(6).list_tables("ns") == [f"t{i}" for i in range(5)]
    assert lake.at(4).list_tables("ns") == ["t0", "t1", "t2"]


def test_fsck_names_the_planted_root(root):
    planted = _plant(root, 2, 7)
    report = Lakehouse.open(str(root), storage_options=NO_FSYNC).fsck()
    assert not report.ok
    assert any(planted in p.location or planted in p.message for p in report.errors)


def test_fsspec_cat_is_eio_naming_the_file(root):
    planted = _plant(root, 2, 1000, 1000)
    fs = TrinityFileSystem(root=str(root), storage_options=NO_FSYNC, skip_instance_cache=True)
    with pytest.raises(OSError) as caught:
        fs.cat_file("ns/t0")
    assert caught.value.errno == errno.EIO and planted in str(caught.value)


def test_cli_prints_one_line_and_fails(root, monkeypatch):
    from frontend_fixtures import run_cli

    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", '{"fsync": false}')
    planted = _plant(root, 2, 1000, 1000)
    result = run_cli(["--root", str(root), "ls", "/ns"])
    assert result.status != 0
    assert planted in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "t0" not in result.out


def test_rest_is_500_with_the_spec_error_naming_the_file(root):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("starlette")
    from trinityfs.rest.server import ServerConfig, ServerThread

    planted = _plant(root, 2, 1000, 1000)
    server = ServerThread(ServerConfig(root=str(root), port=0)).start()
    try:
        response = httpx.get(f"{server.url}/v1/latest/namespaces/ns/tables", timeout=30)
    finally:
        server.stop()
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == 500 and planted in error["message"]


@pytest.mark.fuse
@pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")
def test_the_mount_refuses_to_start_naming_the_file(root, tmp_path):
    planted = _plant(root, 2, 1000, 1000)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    cmd = [sys.executable, "-m", "trinityfs.fuse", str(root), str(mnt), "--foreground"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while proc.poll() is None and not os.path.ismount(mnt) and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:  # it mounted: what did it serve?
        listing = sorted(os.listdir(mnt / "ns")) if os.path.ismount(mnt) else None
        subprocess.run(["fusermount", "-u", str(mnt)], check=False)
        proc.wait(timeout=30)
        pytest.fail(f"mounted a planted root and served ns = {listing}")
    err = proc.communicate()[1]
    assert proc.returncode != 0 and planted in err and "Traceback" not in err


def test_every_kind_of_root_a_lakehouse_writes_still_reads(tmp_path):
    """Guard: rollback, bulk load and exports write roots that pass the check."""
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    lake.create_table("ns", "a", {})
    lake.rollback(1)
    with lake.bulk_load() as bulk:
        bulk.create_table("ns", "b", {})
    lake.export("minimal", version=3)
    lake.export("full", version=4, mode="full")
    fresh = Lakehouse.open(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    assert [fresh.at(v).list_tables("ns") for v in (2, 3, 4)] == [["a"], [], ["b"]]
    assert fresh.at(export="minimal").list_tables("ns") == []
    assert fresh.at(export="full").list_tables("ns") == ["b"]
    assert fresh.fsck().ok
