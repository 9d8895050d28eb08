"""A lakehouse with one version stamped a year in the future: its writer's clock ran
ahead, and every later version is stamped after it (max(now, previous + 1)). Shared by
the tests of time travel, expiration and fsck around such stamps."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import trinityfs.txn.publish as publish
from trinityfs import Lakehouse

YEAR_MS = 365 * 86_400_000


def lake_with_a_future_stamp(
    url: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    storage_options: dict | None = None,
    later: Sequence[str] = ("b0", "b1", "b2"),
) -> Lakehouse:
    """Namespace `a` at version 1, `skewed` at version 2 committed by a clock a year
    ahead, then one namespace per name in `later` (versions 3...) by the right clock."""
    lake = Lakehouse.create(url, storage_options=storage_options or {"fsync": False})
    lake.create_namespace("a")
    real = publish.now_millis
    monkeypatch.setattr(publish, "now_millis", lambda: real() + YEAR_MS)
    lake.create_namespace("skewed")
    monkeypatch.setattr(publish, "now_millis", real)
    for name in later:
        lake.create_namespace(name)
    return lake
