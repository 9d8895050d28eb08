"""Reads started before they are needed: the next root of a commit catching up after a
lost race (`RootStore.newer_versions`) is read beside the root before it."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

# this process's threads, under the key "pool"; a forked child makes its own
_pools: dict[str, ThreadPoolExecutor] = {}
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pools.clear)


def read_ahead(read: Callable[[int], T], version: int) -> Future[T]:
    """`read(version)` on a thread of this process's read-ahead pool."""
    pool = _pools.get("pool")
    if pool is None:
        pool = _pools.setdefault(
            "pool", ThreadPoolExecutor(max_workers=8, thread_name_prefix="trinityfs-read-ahead")
        )
    return pool.submit(read, version)
