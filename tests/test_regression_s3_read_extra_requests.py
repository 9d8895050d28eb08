"""Regression: on S3 every read sent a HEAD before its GET, and a LIST too on a miss.

s3fs's ``cat_file`` asks for the object's size first (to split big files into ranged
reads), so one `Storage.read` cost two requests and reading a missing file (the
``_oldest_version.txt`` marker, read at every transaction begin and commit) three,
while `StorageStats` counted one. Reads are now one GET.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fsspec.asyn import sync

from trinityfs import Lakehouse
from trinityfs.errors import StorageFileNotFoundError
from trinityfs.storage import Storage

pytestmark = pytest.mark.s3


@contextmanager
def count_requests(storage: Storage) -> Iterator[list[str]]:
    """Names of the S3 operations the storage's client sends inside the block."""
    fs = storage.backend.fs
    sync(fs.loop, fs.set_session)
    sent: list[str] = []
    unique_id = f"count-{uuid.uuid4()}"
    fs.s3.meta.events.register(
        "before-call.s3", lambda model, **kwargs: sent.append(model.name), unique_id=unique_id
    )
    try:
        yield sent
    finally:
        fs.s3.meta.events.unregister("before-call.s3", unique_id=unique_id)


def test_read_is_one_get(s3_bucket: str, s3_storage_options: dict[str, Any]) -> None:
    st = Storage(f"s3://{s3_bucket}/{uuid.uuid4().hex}", s3_storage_options)
    st.write("a.txt", b"x" * 100)
    with count_requests(st) as sent:
        assert st.read("a.txt") == b"x" * 100
        assert sent == ["GetObject"]
        with pytest.raises(StorageFileNotFoundError):
            st.read("missing.txt")
        assert sent == ["GetObject", "GetObject"]
    assert st.stats.snapshot()["read"] == 2


def test_commit_requests_match_the_counters(
    s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    lake = Lakehouse.create(
        f"s3://{s3_bucket}/{uuid.uuid4().hex}", storage_options=s3_storage_options
    )
    lake.create_namespace("ns")
    lake.storage.stats.reset()
    with count_requests(lake.storage) as sent:
        lake.create_table("ns", "t")
    assert len(sent) == lake.storage.stats.snapshot()["requests"], sent
