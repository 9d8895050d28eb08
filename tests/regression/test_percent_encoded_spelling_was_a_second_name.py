"""Every path component was percent-decoded, so `/ns/%74` was a second name of table
`t` (and `/%6es`, `/ns/a%2fb%25c`, `/v/%31`, `%C3%A9` for `é`): one object, many paths,
in trinity://, the mount and the CLI, although listings show one. Now only the spelling
`encode_name` gives (`%` as `%25`, `/` as `%2F`) is a path of a name: looking another one
up is FileNotFoundError / ENOENT / a one-line CLI error, writing there is refused
(ValueError / EINVAL), and names that need escaping still go from ls to open."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest
from fuse_mount import FUSE, mounted

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NAMES = ["t", "a/b%c", "é*?[x]", "%74", "per%2Fcent", "50%"]
OTHER_SPELLINGS = [
    "/ns/%74",  # t
    "/%6es/t",  # ns
    "/ns/a%2fb%25c",  # a/b%c, lower-case escape
    "/ns/a%2Fb%c",  # a bare % that is not an escape
    "/ns/%C3%A9*?[x]",  # é escaped
    "/v/%31/ns/t",  # version 1... as /v/1
    "/ns/%2574",  # t escaped twice: the name %74 is /ns/%2574, so this one exists
]


@pytest.fixture
def root(tmp_path) -> str:
    path = str(tmp_path / "lake")
    lake = Lakehouse.create(path)
    lake.create_namespace("ns")
    with lake.transaction() as txn:
        for name in NAMES:
            txn.create_table("ns", name, {"table_format": "ICEBERG", "properties": {"n": name}})
    return path


EXPECTED = sorted(["t", "a%2Fb%25c", "é*?[x]", "%2574", "per%252Fcent", "50%25"])


def test_trinity_fs_has_one_path_per_object(root):
    fs = TrinityFileSystem(root)
    listed = fs.ls("/ns", detail=False)
    assert sorted(p.rsplit("/", 1)[1] for p in listed) == EXPECTED
    for path in listed:  # what ls shows opens, and is that object
        name = json.loads(fs.cat(path))["definition"]["properties"]["n"]
        assert fs.info(path)["name"] == path
        assert path == "/ns/" + name.replace("%", "%25").replace("/", "%2F")
    for path in OTHER_SPELLINGS[:-1]:
        assert not fs.exists(path), path
        with pytest.raises(FileNotFoundError, match="is not how paths spell"):
            fs.cat(path)
    assert json.loads(fs.cat("/ns/%2574"))["definition"]["properties"]["n"] == "%74"
    with pytest.raises(ValueError, match="is not how paths spell"):
        fs.pipe("/ns/%75", b'{"kind": "table", "definition": {}}')
    assert sorted(p.rsplit("/", 1)[1] for p in fs.ls("/ns", detail=False)) == EXPECTED


def test_cli_refuses_another_spelling_in_one_line(root):
    def cli(*args: str) -> subprocess.CompletedProcess:
        code = "import sys; from trinityfs.cli import main; sys.exit(main())"
        return subprocess.run(
            [sys.executable, "-c", code, "--root", root, *args], capture_output=True, text=True
        )

    for args in (("cat", "/ns/%74"), ("rm", "/ns/%74"), ("ls", "/v/%31")):
        done = cli(*args)
        assert done.returncode != 0 and done.stdout == "", done
        assert done.stderr.count("\n") == 1 and "is not how paths spell" in done.stderr, done
    assert Lakehouse.open(root).describe_table("ns", "t").table_format == "ICEBERG"
    assert cli("cat", "/ns/a%2Fb%25c").returncode == 0


@FUSE[0]
@FUSE[1]
def test_mount_has_one_path_per_object(root, tmp_path):
    with mounted(root, tmp_path / "mnt") as mount:
        ns = mount.path / "ns"
        assert sorted(os.listdir(ns)) == EXPECTED
        for name in os.listdir(ns):  # what ls shows opens
            assert json.loads((ns / name).read_bytes())["kind"] == "table"
        found = subprocess.run(["find", str(mount.path), "-type", "f"], capture_output=True)
        assert sorted(p.rsplit(b"/", 1)[1].decode() for p in found.stdout.split()) == EXPECTED
        for path in OTHER_SPELLINGS[:-1]:
            target = mount.path / path.lstrip("/")
            assert not target.exists(), path
            done = subprocess.run(["cat", str(target)], capture_output=True, text=True)
            assert done.returncode != 0 and "No such file" in done.stderr, path
        before = mount.latest()
        with pytest.raises(OSError) as info:
            (ns / "%75").write_bytes(b'{"kind": "table", "definition": {}}')
        assert info.value.errno == errno.EINVAL
        with pytest.raises(OSError) as info:
            os.rename(ns / "t", ns / "%75")
        assert info.value.errno == errno.EINVAL
        assert mount.latest() == before
        assert sorted(os.listdir(ns)) == EXPECTED
