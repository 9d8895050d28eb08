"""Which of many files are missing: existence checks in parallel batches (a commit that
checks what a saved transaction staged, a root that landed late checking its files)."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

from trinityfs.storage.core import Storage

#: files checked together by `first_missing`
EXISTS_BATCH = 1024


def first_missing(storage: Storage, locations: Iterable[str], threads: int = 16) -> str | None:
    """The first of `locations` (streamed, checked in parallel batches) not in storage."""
    batch: list[str] = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for location in chain(locations, [None]):
            if location is not None:
                batch.append(location)
                if len(batch) < EXISTS_BATCH:
                    continue
            for loc, present in zip(batch, pool.map(storage.exists, batch), strict=True):
                if not present:
                    return loc
            batch = []
    return None
