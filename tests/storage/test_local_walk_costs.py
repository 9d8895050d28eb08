"""System calls the local backend spends on directories (issue 13): a directory found
missing is made before it is opened (not opened, found missing, made, opened); a batch
of flushes and a listing check the root's descriptor once, not once per directory; a
lakehouse is looked for right in the root directory, not in the whole tree below it
(opening /usr/lib as a lakehouse listed all of it). Every test here fails on e0c4099."""

from __future__ import annotations

import os
import types

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.storage import Storage, dirfds, local, localdirs, localio
from trinityfs.storage.local import LocalBackend

_OPENAT2 = localdirs._OPENAT2


class _CountingOs(types.ModuleType):
    """`os` for the local backend's modules: records open, mkdir, fstat and scandir."""

    def __init__(self) -> None:
        super().__init__("os")
        self.calls: list[tuple[str, str]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def open(self, path, flags, mode=0o777, *, dir_fd=None):
        self.calls.append(("open", str(path)))
        return os.open(path, flags, mode, dir_fd=dir_fd)

    def mkdir(self, path, mode=0o777, *, dir_fd=None):
        self.calls.append(("mkdir", str(path)))
        return os.mkdir(path, mode, dir_fd=dir_fd)

    def fstat(self, fd):
        self.calls.append(("fstat", ""))
        return os.fstat(fd)

    def scandir(self, path="."):
        self.calls.append(("scandir", ""))
        return os.scandir(path)

    def named(self, op: str) -> list[str]:
        return [arg for name, arg in self.calls if name == op]


@pytest.fixture
def counting(monkeypatch) -> _CountingOs:
    fake = _CountingOs()
    for module in (local, localdirs, localio, dirfds):
        monkeypatch.setattr(module, "os", fake)
    return fake


@pytest.fixture(params=["openat2", "walk"])
def resolve(request, monkeypatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(_OPENAT2, "enabled", False)
    elif not _OPENAT2.enabled:
        pytest.skip("no openat2 here")
    return request.param


def test_new_directories_are_made_before_they_are_opened(tmp_path, counting, resolve):
    backend = LocalBackend(str(tmp_path / "lake"), fsync=True)
    backend.write("a/b/c/f", b"x")
    counting.calls.clear()
    backend.write_new_unsynced("a/b/d/e/g", b"y")
    opened = [p for p in counting.named("open") if p not in (".", "a", "b")]
    if resolve == "openat2":  # d was found missing by openat2: made, then opened
        assert opened == ["d", "e", "g"]
    else:  # the walk finds d missing by opening it; e below the new d is made at once
        assert opened == ["d", "d", "e", "g"]
    assert counting.named("mkdir") == ["d", "e"]
    backend.sync(["a/b/d/e/g"])
    assert (tmp_path / "lake/a/b/d/e/g").read_bytes() == b"y"


@pytest.mark.skipif(not _OPENAT2.enabled, reason="no openat2 here")
def test_a_new_first_level_directory_is_made_at_once(tmp_path, counting):
    backend = LocalBackend(str(tmp_path / "lake"), fsync=False)
    backend.write("r", b"x")  # the root exists
    counting.calls.clear()
    backend.write_new_unsynced("x/y/z/f", b"y")
    assert counting.named("open") == [".", "x", "y", "z", "f"]
    assert counting.named("mkdir") == ["x", "y", "z"]
    assert backend.read("x/y/z/f") == b"y"


def test_a_directory_made_meanwhile_is_used(tmp_path, monkeypatch, resolve):
    """Guard: another writer made the directory between the probe and the mkdir."""
    backend = LocalBackend(str(tmp_path / "lake"), fsync=False)
    backend.write("a/f", b"x")
    real_mkdir = LocalBackend._mkdir

    def racing(self, fd, dirs, i, durable):
        os.makedirs(tmp_path / "lake" / os.path.join(*dirs[: i + 1]), exist_ok=True)
        return real_mkdir(self, fd, dirs, i, durable)

    monkeypatch.setattr(LocalBackend, "_mkdir", racing)
    backend.write_new_unsynced("a/n/m/g", b"y")
    assert backend.read("a/n/m/g") == b"y"


def test_a_flush_batch_and_a_listing_check_the_root_once(tmp_path, counting):
    backend = LocalBackend(str(tmp_path / "lake"), fsync=True)
    locs = [f"{d}/e/f{i}" for i, d in enumerate("abcd")]
    for loc in locs:
        backend.write_new_unsynced(loc, b"x")
    counting.calls.clear()
    backend.sync(locs)  # 4 files, 4 directories (and the root's new entries)
    assert len(counting.named("fstat")) == 1
    counting.calls.clear()
    backend.start_sync(locs)()
    assert len(counting.named("fstat")) == 1
    counting.calls.clear()
    pages = list(backend.list_pages(""))
    assert sorted(e.location for page in pages for e in page) == sorted(locs)
    assert len(counting.named("fstat")) == 1
    assert len(counting.named("scandir")) == 9  # the root, a..d, a/e..d/e


def test_a_directory_without_a_lakehouse_is_not_listed_below_its_top(tmp_path, counting):
    deep = tmp_path / "home" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "notes.txt").write_text("x")
    (tmp_path / "home" / "readme.txt").write_text("x")
    with pytest.raises(LakehouseNotFoundError, match="no lakehouse"):
        Lakehouse.open(str(tmp_path / "home"))
    assert len(counting.named("scandir")) == 1


@pytest.mark.parametrize("url", ["local", "memory"])
def test_a_listing_of_one_directory(tmp_path, url):
    target = str(tmp_path / "s") if url == "local" else f"memory://list-one-{os.getpid()}"
    storage = Storage(target)
    for loc in ("top.txt", "_1.arrow", "d/inner.txt", "d/e/deeper.txt"):
        storage.write(loc, b"x")
    assert [e.location for e in storage.list("", recursive=False)] == ["_1.arrow", "top.txt"]
    assert [e.location for e in storage.list("d", recursive=False)] == ["d/inner.txt"]
    assert len(storage.list("")) == 4
    assert storage.list("nowhere", recursive=False) == []
