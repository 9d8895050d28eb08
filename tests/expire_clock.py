"""Run expiration as if time had passed, for tests that need files to be old.

Expiration never sweeps files younger than the longest a commit may take (the grace
floor: the commit budget, or txn_ttl_millis when shorter), whatever ``grace_millis``
says. Tests that want garbage collected right away run expiration "later" instead of
sleeping for minutes: only expiration's clock moves, every file and root then looks
`minutes` older to it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def expiring_later(minutes: float = 10) -> Iterator[None]:
    """Inside the block, expiration's clock runs `minutes` ahead."""
    module = importlib.import_module("trinityfs.lifecycle.expire")
    real = module.now_millis
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "now_millis", lambda: real() + int(minutes * 60_000))
        yield
