"""LocalBackend.overwrite_advisory (the hint): in place, under flock, few system calls."""

from __future__ import annotations

import os

import pytest

from trinityfs.storage import local, localdirs, localio
from trinityfs.storage.local import LocalBackend


class _Counting:
    """Counts the `os` calls the local backend makes (by name), passing them through."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[tuple[str, tuple]] = []
        real = os

        class Os:
            def __getattr__(_, name):
                attr = getattr(real, name)
                if not callable(attr) or name in ("fspath", "path"):
                    return attr

                def call(*args, **kwargs):
                    self.calls.append((name, args))
                    return attr(*args, **kwargs)

                return call

        counting = Os()
        for module in (local, localdirs, localio):  # local.py and its parts
            monkeypatch.setattr(module, "os", counting)

    def named(self, name: str) -> list[tuple]:
        return [args for n, args in self.calls if n == name]


@pytest.fixture
def backend(tmp_path):
    backend = LocalBackend(str(tmp_path / "lake"))
    backend.overwrite_advisory("_latest_hint.txt", b"9")
    return backend


def test_a_growing_hint_is_written_without_truncating(backend, monkeypatch, tmp_path):
    counting = _Counting(monkeypatch)
    backend.overwrite_advisory("_latest_hint.txt", b"10")
    assert counting.named("ftruncate") == []
    assert (tmp_path / "lake" / "_latest_hint.txt").read_bytes() == b"10"


def test_a_hint_at_the_root_opens_only_the_file(backend, monkeypatch):
    counting = _Counting(monkeypatch)
    backend.overwrite_advisory("_latest_hint.txt", b"10")
    assert [args[0] for args in counting.named("open")] == ["_latest_hint.txt"]
    assert len(counting.named("close")) == 1


def test_a_shorter_hint_cuts_the_longer_text(backend, tmp_path):
    backend.overwrite_advisory("_latest_hint.txt", b"12345")
    backend.overwrite_advisory("_latest_hint.txt", b"7")
    assert (tmp_path / "lake" / "_latest_hint.txt").read_bytes() == b"7"


def test_a_hint_with_another_link_is_replaced_not_written_through(backend, tmp_path):
    lake = tmp_path / "lake"
    os.link(lake / "_latest_hint.txt", tmp_path / "other")
    backend.overwrite_advisory("_latest_hint.txt", b"10")
    assert (tmp_path / "other").read_bytes() == b"9"
    assert (lake / "_latest_hint.txt").read_bytes() == b"10"


def test_a_hint_below_a_missing_root_makes_the_root(tmp_path):
    backend = LocalBackend(str(tmp_path / "gone" / "lake"))
    backend.overwrite_advisory("_latest_hint.txt", b"3")
    assert (tmp_path / "gone" / "lake" / "_latest_hint.txt").read_bytes() == b"3"


def test_a_nested_advisory_file_is_written_in_place(tmp_path):
    backend = LocalBackend(str(tmp_path / "lake"))
    backend.overwrite_advisory("a/b/hint.txt", b"41")
    inode = os.stat(tmp_path / "lake" / "a" / "b" / "hint.txt").st_ino
    backend.overwrite_advisory("a/b/hint.txt", b"5")
    path = tmp_path / "lake" / "a" / "b" / "hint.txt"
    assert path.read_bytes() == b"5" and os.stat(path).st_ino == inode
