"""Issue 11 item 4: names FORMAT.md allows (`/`, `%`, `.`, `..`, `* ? [ ]`) could be made
through the API and then reached by nothing; `rm '/a/t*'` dropped t1, t2 and `t*`;
`rm -r '/*'` meant for the namespace `*` dropped every namespace; `.` and `..` appeared
twice in the mount's listings and blocked `rm -rf`.

One escaping everywhere (trinityfs.fs.paths): `%` is `%25`, `/` is `%2F`, a name `.` or
`..` is `%2E` / `%2E%2E`; glob characters are literal except in pattern APIs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from unittest import mock

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem
from trinityfs.fs.paths import decode_name, encode_name

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuse"))
from fuse_helpers import SKIP_REASON, mounted

NO_FSYNC = {"fsync": False}
ODD = ["a/b", "50%", "%2F", ".", "..", "t*", "q?", "[x]"]


def _build(root: str) -> Lakehouse:
    lake = Lakehouse.create(root, storage_options=NO_FSYNC)
    # trinityfs refuses to create '.' and '..' (trinityfs/catalog/names.py); another
    # implementation may create them, so build as one would, without that policy
    with mock.patch("trinityfs.catalog.writer.check_new_name", lambda *a, **k: None):
        lake.create_namespace("a")
        for name in ["t1", "t2", *ODD]:
            lake.create_table("a", name, {"properties": {"name": name}})
        for ns in ("*", "keep", "..", "x/y"):
            lake.create_namespace(ns)
        lake.create_table("..", "t", {})
    return lake


@pytest.fixture
def root(tmp_path) -> str:
    path = str(tmp_path / "lake")
    _build(path)
    return path


def _fs(root: str) -> TrinityFileSystem:
    return TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)


def test_encoding_round_trips() -> None:
    for name in [*ODD, "plain", "é%41", "%%", "a//b"]:
        assert decode_name(encode_name(name)) == name
        assert "/" not in encode_name(name)
        assert encode_name(name) not in (".", "..")


def test_every_name_is_reachable_through_trinity(root: str) -> None:
    fs = _fs(root)
    listed = sorted(p.rsplit("/", 1)[1] for p in fs.ls("/a", detail=False))
    assert listed == sorted(encode_name(n) for n in ["t1", "t2", *ODD])
    for name in ODD:
        path = f"/a/{encode_name(name)}"
        assert fs.info(path)["type"] == "file"
        assert f'"name": "{name}"' in fs.cat_file(path).decode()
    assert fs.ls("/%2E%2E", detail=False) == ["/%2E%2E/t"]
    assert fs.isdir("/x%2Fy") and fs.isdir("trinity://*")
    assert not fs.exists("trinity://%2A")  # `*` has one path (fronts6: no second spelling)
    assert fs.ls("/a/./..", detail=False) == fs.ls("/", detail=False)  # dot segments


def test_rm_of_an_exact_name_never_expands(root: str) -> None:
    fs = _fs(root)
    fs.rm("/a/t*")
    assert not fs.exists("/a/t*") and fs.exists("/a/t1") and fs.exists("/a/t2")
    fs.rm("/*", recursive=True)
    assert not fs.exists("/*") and fs.exists("/keep") and fs.exists("/a")
    fs.mv("/a/q?", "/a/q!")
    assert fs.exists("/a/q!") and fs.exists("/a/t1")
    fs.cp("/a/[x]", "/keep/")
    assert fs.exists("/keep/[x]") and not fs.exists("/keep/t1")
    assert sorted(fs.glob("/a/t[*12]")) == ["/a/t1", "/a/t2"]  # patterns: explicit
    assert fs.glob("/a/[[]x]") == ["/a/[x]"]


def _cli(root: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trinityfs.cli", "--root", root, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )


def test_the_cli_uses_the_same_escaping(root: str) -> None:
    result = _cli(root, "cat", "/a/a%2Fb")
    assert result.returncode == 0, result.stderr
    assert '"name": "a/b"' in result.stdout
    assert _cli(root, "rm", "/a/t*").returncode == 0
    fs = _fs(root)
    assert not fs.exists("/a/t*") and fs.exists("/a/t1") and fs.exists("/a/t2")


@pytest.mark.fuse
@pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")
def test_the_mount_lists_each_name_once_and_rm_rf_works(root: str, tmp_path) -> None:
    with mounted(root, tmp_path / "mnt") as m:
        names = os.listdir(m.path / "a")
        assert sorted(names) == sorted(encode_name(n) for n in ["t1", "t2", *ODD])
        assert "." not in names and ".." not in names
        assert '"name": "a/b"' in (m.path / "a" / "a%2Fb").read_text()
        assert '"name": ".."' in (m.path / "a" / "%2E%2E").read_text()
        assert sorted(os.listdir(m.path / "%2E%2E")) == ["t"]
        shutil.rmtree(m.path / "a")  # rm -rf
        shutil.rmtree(m.path / "%2E%2E")
        assert not (m.path / "a").exists() and (m.path / "keep").exists()
    assert not _fs(root).exists("/a")
