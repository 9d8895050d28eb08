"""Fixtures of the FUSE suites (helpers in fuse_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fuse_helpers import Mount, start_mount


@pytest.fixture
def make_mount(tmp_path) -> Iterator[Callable[..., Mount]]:
    """Start mounts that are unmounted at the end of the test."""
    mounts: list[Mount] = []

    def make(root: str, *args: str, name: str = "mnt", env: dict | None = None) -> Mount:
        mount = start_mount(root, tmp_path / name, *args, env=env)
        mounts.append(mount)
        return mount

    yield make
    for mount in mounts:
        mount.unmount()
