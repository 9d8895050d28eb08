"""A FIFO planted at a definition's (or node's) name inside a local lakehouse made every
reader of it wait forever: `describe_table`, `fs.cat`, a FUSE read or a REST request
opened it for reading and blocked until someone opened it for writing (helper rate4's
note). A directory there was a StorageError quoting IsADirectoryError. Now the local
backend opens files without waiting (O_NONBLOCK) and anything but a regular file is
CorruptFileError naming it."""

from __future__ import annotations

import os

import pytest
from waits import within

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.fs import TrinityFileSystem

WAIT = 20.0  # seconds a call may take before the test says it hangs


def _planted(tmp_path, make) -> tuple[Lakehouse, str]:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    location = lake.snapshot().locate("ns", "t")[1]
    path = os.path.join(str(tmp_path / "lake"), location)
    os.remove(path)
    make(path)
    return lake, location


@pytest.mark.parametrize("make", [os.mkfifo, os.mkdir], ids=["fifo", "directory"])
def test_a_planted_entry_at_a_definition_is_damage_not_a_hang(tmp_path, make) -> None:
    lake, location = _planted(tmp_path, make)
    reader = Lakehouse.open(lake.url)
    with pytest.raises(CorruptFileError, match="is where a file should be") as caught:
        within(WAIT, lambda: reader.describe_table("ns", "t"))
    assert caught.value.path == location
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    with pytest.raises(OSError, match="is where a file should be"):
        within(WAIT, lambda: fs.cat("ns/t"))
