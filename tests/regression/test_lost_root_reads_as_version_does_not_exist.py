"""The root of a kept version, lost from storage (versions 2 and 4 kept, the oldest
marker at 0, root 3 deleted), read as "version 3 does not exist": the same words as for
a version beyond the latest, so the API, fsspec (ENOENT) and the CLI hid damage that
fsck reports. Expiration moves the oldest marker before it deletes a root, so on a
healthy lakehouse a version between the oldest and the latest always has its root: a
missing one is now CorruptFileError naming the file (EIO through fsspec). Reported by
helper adversary2 (rest/ already answered 500 for it)."""

from __future__ import annotations

import errno
import os

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, VersionNotFoundError
from trinityfs.format.paths import root_node_file
from trinityfs.fs import TrinityFileSystem


def _lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    for i in range(4):
        lake.create_table("ns", f"t{i}")
    assert lake.latest_version() == 5
    return lake


def _lose_root(lake: Lakehouse, version: int) -> str:
    name = root_node_file(version)
    os.remove(os.path.join(lake.url.removeprefix("file://"), name))
    return name


def test_a_lost_root_of_a_kept_version_is_damage_naming_the_file(tmp_path) -> None:
    lake = _lake(tmp_path)
    name = _lose_root(lake, 3)
    reader = Lakehouse.open(lake.url)
    with pytest.raises(CorruptFileError, match="versions 0 to 5 are kept") as caught:
        reader.at(3)
    assert caught.value.path == name and caught.value.version == 3
    with pytest.raises(CorruptFileError):
        reader.view("3")
    with pytest.raises(VersionNotFoundError, match=r"does not exist \(the latest version is 5\)"):
        reader.at(9)
    assert reader.at(4).list_tables("ns") == ["t0", "t1", "t2"]


def test_fsspec_reports_a_lost_root_as_an_io_error(tmp_path) -> None:
    lake = _lake(tmp_path)
    _lose_root(lake, 3)
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    with pytest.raises(OSError) as caught:
        fs.ls("v/3", detail=False)
    assert caught.value.errno == errno.EIO
    with pytest.raises(FileNotFoundError):
        fs.ls("v/9", detail=False)


def test_a_version_committed_between_the_look_and_the_check_is_read(tmp_path) -> None:
    """The guard against the classification's race: root 6 missing at the first look,
    committed before the latest version is read: version 6 is read, not "lost"."""
    lake = _lake(tmp_path)
    writer = Lakehouse.open(lake.url, storage_options={"fsync": False})
    roots = lake.engine.roots
    real = roots.load
    looks: list[int] = []

    def missing_once(version: int):
        looks.append(version)
        if len(looks) == 1:
            writer.create_table("ns", "late")  # version 6 lands right after the miss
            raise VersionNotFoundError(f"version {version} does not exist")
        return real(version)

    roots.load = missing_once  # type: ignore[method-assign]
    assert "late" in lake.at(6).list_tables("ns")
    assert looks == [6, 6]
