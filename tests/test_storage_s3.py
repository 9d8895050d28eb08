"""Storage layer behaviour on S3, against a real S3 API server (moto) on 127.0.0.1."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import fsspec
import pytest
from s3fs import S3FileSystem
from test_storage import MakeStorage, StorageBehaviour

from trinityfs.errors import StorageError, StorageFileNotFoundError, UnsupportedStorageError
from trinityfs.storage import Storage

pytestmark = pytest.mark.s3


@pytest.fixture
def s3_url(s3_bucket: str) -> str:
    return f"s3://{s3_bucket}/{uuid.uuid4().hex}/lake"


@pytest.fixture
def make_storage(s3_url: str, s3_storage_options: dict[str, Any]) -> Iterator[MakeStorage]:
    def make(cache_bytes: int = 256 * 2**20) -> Storage:
        return Storage(s3_url, s3_storage_options, cache_bytes=cache_bytes)

    yield make


class TestS3Storage(StorageBehaviour):
    """The same contract as local disk and memory://, on s3://."""


def test_keys_live_below_the_prefix(
    s3_url: str, s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    st = Storage(s3_url, s3_storage_options)
    st.write("a/b.arrow", b"node")
    assert st.create_if_absent("_1.arrow", b"root")
    fs = S3FileSystem(**s3_storage_options, skip_instance_cache=True)
    prefix = s3_url.removeprefix("s3://")
    assert fs.cat_file(f"{prefix}/a/b.arrow") == b"node"
    assert sorted(fs.find(f"{s3_bucket}/{prefix.split('/')[1]}")) == [
        f"{prefix}/_1.arrow",
        f"{prefix}/a/b.arrow",
    ]


def test_probe_runs_once_and_cleans_up(s3_url: str, s3_storage_options: dict[str, Any]) -> None:
    st = Storage(s3_url, s3_storage_options)
    assert st.create_if_absent("one", b"1")
    assert not st.create_if_absent("one", b"2")
    snap = st.stats.snapshot()
    assert snap["probe"] == 3  # create, create again (refused), delete
    assert snap["create"] == 2
    assert [e.location for e in st.list()] == ["one"]


def test_single_create_is_one_request_after_probe(
    s3_url: str, s3_storage_options: dict[str, Any]
) -> None:
    st = Storage(s3_url, s3_storage_options)
    st.probe_conditional_writes()
    st.stats.reset()
    assert st.create_if_absent("_1.arrow", b"root")
    assert st.stats.snapshot()["requests"] == 1


def _drop_if_none_match(params: dict[str, Any], **kwargs: Any) -> None:
    params.pop("IfNoneMatch", None)


class IgnoresConditionalWrites(S3FileSystem):
    """An S3 client that never sends If-None-Match, like a store that ignores it."""

    protocol = ("s3lax",)

    async def set_session(self, *args: Any, **kwargs: Any) -> Any:
        client = await super().set_session(*args, **kwargs)
        client.meta.events.register(
            "before-parameter-build.s3.PutObject",
            _drop_if_none_match,
            unique_id="trinityfs-test-drop-if-none-match",
        )
        return client


def test_store_ignoring_conditional_writes_is_refused(
    s3_url: str, s3_storage_options: dict[str, Any]
) -> None:
    fsspec.register_implementation("s3lax", IgnoresConditionalWrites, clobber=True)
    lax_url = s3_url.replace("s3://", "s3lax://", 1)
    st = Storage(lax_url, s3_storage_options)
    # the wrapper really drops the condition: a raw second create "succeeds"
    assert st.backend.create_if_absent("raw", b"1")
    assert st.backend.create_if_absent("raw", b"2")
    st.backend.delete("raw")

    with pytest.raises(UnsupportedStorageError, match="ignores conditional writes"):
        st.create_if_absent("_1.arrow", b"root")
    with pytest.raises(UnsupportedStorageError):  # remembered: no second probe
        st.create_if_absent("_1.arrow", b"root")
    assert st.stats.snapshot()["probe"] == 3
    assert st.stats.snapshot()["create"] == 0
    assert st.list() == []  # probe file removed, root never written

    # the same prefix through the honest client works
    assert Storage(s3_url, s3_storage_options).create_if_absent("_1.arrow", b"root")


def test_missing_bucket(s3_storage_options: dict[str, Any]) -> None:
    st = Storage(f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/lake", s3_storage_options)
    with pytest.raises(StorageFileNotFoundError):
        st.read("x")
    with pytest.raises(StorageError) as err:
        st.create_if_absent("_1.arrow", b"root")
    assert not isinstance(err.value, UnsupportedStorageError)
    assert err.value.__cause__ is not None
