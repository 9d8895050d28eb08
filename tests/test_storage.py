"""Storage layer behaviour on local disk (plain path and file:// URL) and memory://.

`StorageBehaviour` holds the contract every backend meets; test_storage_s3.py runs it
against a real S3 API server.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from trinityfs.errors import (
    AmbiguousWriteError,
    InvalidArgumentError,
    StorageError,
    StorageFileNotFoundError,
    UnsafeLocationError,
    UnsupportedStorageError,
)
from trinityfs.storage import FileEntry, Storage, open_storage
from trinityfs.storage.s3 import classify_conditional_put_error

MakeStorage = Callable[..., Storage]

UNSAFE_LOCATIONS = [
    "",
    "/etc/passwd",
    "../escape",
    "a/../../escape",
    "./a",
    "a//b",
    "s3://bucket/key",
    "file:///etc/passwd",
    "memory://elsewhere/x",
]


def _requests(st: Storage) -> int:
    return st.stats.snapshot()["requests"]


class StorageBehaviour:
    """The contract of `Storage`, run for every backend through a `make_storage` fixture."""

    def test_round_trip(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write("a/b/c.bin", b"\x00hello\xff")
        assert st.read("a/b/c.bin") == b"\x00hello\xff"
        assert st.exists("a/b/c.bin")
        assert st.size("a/b/c.bin") == 7
        st.write_immutable("node-1.arrow", bytearray(b"node"))
        assert st.read_immutable("node-1.arrow") == b"node"
        st.write("empty", memoryview(b""))
        assert st.read("empty") == b""
        assert st.size("empty") == 0
        assert st.url_of("a/b/c.bin") == st.url + "a/b/c.bin"
        assert st.url.endswith("/")

    def test_overwrite(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write("_latest_hint.txt", b"1")
        st.write("_latest_hint.txt", b"12345")
        assert st.read("_latest_hint.txt") == b"12345"
        st.write("_latest_hint.txt", b"7")
        assert st.read("_latest_hint.txt") == b"7"
        assert st.size("_latest_hint.txt") == 1

    def test_missing_file(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        for op in (st.read, st.read_immutable, st.size):
            with pytest.raises(StorageFileNotFoundError) as err:
                op("x/missing.arrow")
            assert err.value.path == "x/missing.arrow"
        assert not st.exists("x/missing.arrow")
        st.delete("x/missing.arrow")  # not an error

    def test_listing(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        before = time.time()
        files = {"a/1": b"1", "a/b/2": b"22", "ab/3": b"333", "top": b"4444"}
        for loc, data in files.items():
            st.write(loc, data)
        entries = st.list()
        assert [e.location for e in entries] == sorted(files)
        assert all(isinstance(e, FileEntry) for e in entries)
        assert {e.location: e.size for e in entries} == {k: len(v) for k, v in files.items()}
        for e in entries:
            assert isinstance(e.mtime, float)
            assert before - 5 <= e.mtime <= time.time() + 5
        assert [e.location for e in st.list("a")] == ["a/1", "a/b/2"]
        assert [e.location for e in st.list("a/")] == ["a/1", "a/b/2"]
        assert [e.location for e in st.list("a/b")] == ["a/b/2"]
        assert st.list("nothing/here") == []

    def test_delete(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write_immutable("d/node.arrow", b"n")
        st.delete("d/node.arrow")
        assert not st.exists("d/node.arrow")
        with pytest.raises(StorageFileNotFoundError):
            st.read_immutable("d/node.arrow")  # evicted from the cache too
        st.delete("d/node.arrow")
        assert st.list() == []

    def test_create_if_absent(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        root = "_" + "1" + "0" * 63 + ".arrow"
        assert st.create_if_absent(root, b"first") is True
        assert st.create_if_absent(root, b"second") is False
        assert st.read(root) == b"first"
        assert st.create_if_absent("deep/er/file", b"x") is True
        assert [e.location for e in st.list()] == [root, "deep/er/file"]

    def test_create_race_threads(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        n = 16
        barrier = threading.Barrier(n)
        results: list[tuple[bytes, bool]] = []
        lock = threading.Lock()

        def contender(i: int) -> None:
            payload = f"writer {i} ".encode() * 1000
            barrier.wait()
            created = st.create_if_absent("race/root.arrow", payload)
            with lock:
                results.append((payload, created))

        threads = [threading.Thread(target=contender, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [payload for payload, created in results if created]
        assert len(results) == n
        assert len(winners) == 1
        assert st.read("race/root.arrow") == winners[0]

    def test_no_partial_file_visible(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        payload = os.urandom(1024) * 8 * 1024  # 8 MiB
        seen: list[int] = []
        done = threading.Event()

        def reader() -> None:
            while True:
                finished = done.is_set()
                try:
                    data = st.read("big/root.arrow")
                except StorageFileNotFoundError:
                    data = None
                if data is not None:
                    seen.append(len(data))
                    assert data == payload
                if finished:
                    return

        t = threading.Thread(target=reader)
        t.start()
        try:
            assert st.create_if_absent("big/root.arrow", payload)
        finally:
            done.set()
            t.join()
        assert seen and set(seen) == {len(payload)}

    def test_overwrite_never_partial(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        versions = [bytes([i]) * (4 * 2**20) for i in range(3)]
        st.write("hint", versions[0])
        bad: list[int] = []
        done = threading.Event()

        def reader() -> None:
            while not done.is_set():
                data = st.read("hint")
                if data not in versions:
                    bad.append(len(data))

        t = threading.Thread(target=reader)
        t.start()
        try:
            for v in versions[1:] * 2:
                st.write("hint", v)
        finally:
            done.set()
            t.join()
        assert bad == []

    def test_warm_immutable_read_makes_no_request(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write("defs/table.binpb", b"definition")  # written by another process, say
        st.stats.reset()
        assert st.read_immutable("defs/table.binpb") == b"definition"
        assert st.stats.snapshot()["read"] == 1
        for _ in range(5):
            assert st.read_immutable("defs/table.binpb") == b"definition"
        snap = st.stats.snapshot()
        assert snap["read"] == 1
        assert snap["read_cached_hit"] == 5
        assert snap["requests"] == 1
        assert snap["bytes_read"] == len(b"definition")

    def test_write_immutable_primes_cache(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write_immutable("n/node-a.arrow", b"abc")
        st.stats.reset()
        assert st.read_immutable("n/node-a.arrow") == b"abc"
        assert st.stats.snapshot()["requests"] == 0

    def test_cache_eviction_bound(self, make_storage: MakeStorage) -> None:
        st = make_storage(cache_bytes=1000)
        for i in range(10):
            st.write_immutable(f"n/{i}", bytes([i]) * 300)
            assert st.cache.current_bytes <= 1000
        assert len(st.cache) == 3
        st.stats.reset()
        assert st.read_immutable("n/9") == bytes([9]) * 300
        assert st.stats.snapshot()["read"] == 0
        assert st.read_immutable("n/0") == bytes([0]) * 300  # evicted: read again
        assert st.stats.snapshot()["read"] == 1
        st.write_immutable("huge", b"h" * 5000)  # larger than the budget: not cached
        assert "huge" not in st.cache
        assert st.cache.current_bytes <= 1000

    @pytest.mark.parametrize("loc", UNSAFE_LOCATIONS)
    def test_unsafe_locations_rejected_before_io(self, make_storage: MakeStorage, loc: str) -> None:
        st = make_storage()
        calls: list[Callable[[], object]] = [
            lambda: st.read(loc),
            lambda: st.read_immutable(loc),
            lambda: st.write(loc, b"x"),
            lambda: st.write_immutable(loc, b"x"),
            lambda: st.create_if_absent(loc, b"x"),
            lambda: st.exists(loc),
            lambda: st.size(loc),
            lambda: st.delete(loc),
            lambda: st.url_of(loc),
        ]
        if loc:
            calls.append(lambda: st.list(loc))
        for call in calls:
            with pytest.raises(UnsafeLocationError):
                call()
        snap = st.stats.snapshot()
        assert snap["requests"] == 0 and snap["read_cached_hit"] == 0

    def test_pickle_round_trip(self, make_storage: MakeStorage) -> None:
        st = make_storage(cache_bytes=12345)
        st.write_immutable("p/node.arrow", b"pickled")
        clone = pickle.loads(pickle.dumps(st))
        assert clone.url == st.url
        assert clone.cache.max_bytes == 12345
        assert len(clone.cache) == 0
        assert _requests(clone) == 0
        assert clone.read_immutable("p/node.arrow") == b"pickled"
        assert clone.create_if_absent("p/node.arrow", b"other") is False

    def test_stats(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write("s/a", b"12345")
        st.create_if_absent("s/b", b"67")
        st.read("s/a")
        st.exists("s/a")
        st.size("s/a")
        st.list("s")
        st.delete("s/a")
        snap = st.stats.snapshot()
        for kind in ("write", "create", "read", "exists", "size", "list", "delete"):
            assert snap[kind] == 1, kind
        assert snap["bytes_written"] == 7
        assert snap["bytes_read"] == 5
        st.stats.reset()
        assert _requests(st) == 0

    def test_child_storage(self, make_storage: MakeStorage) -> None:
        st = make_storage()
        st.write("_exports/e1/_1.arrow", b"root")
        sub = st.child("_exports/e1")
        assert sub.url == st.url + "_exports/e1/"
        assert sub.read("_1.arrow") == b"root"
        assert st.stats.snapshot()["read"] == 1  # shared counters


# -- local disk and memory:// ----------------------------------------------------------------


@pytest.fixture(params=["path", "file_url", "memory"])
def make_storage(request: pytest.FixtureRequest, tmp_path) -> Iterator[MakeStorage]:
    if request.param == "memory":
        url = f"memory://trinityfs-test-{uuid.uuid4().hex}"
    else:
        path = str(tmp_path / "lake")
        url = path if request.param == "path" else "file://" + path

    def make(cache_bytes: int = 256 * 2**20) -> Storage:
        return Storage(url, cache_bytes=cache_bytes)

    yield make
    if request.param == "memory":
        from fsspec.implementations.memory import MemoryFileSystem

        root = "/" + url.removeprefix("memory://")
        for key in [k for k in MemoryFileSystem.store if k.startswith(root + "/")]:
            MemoryFileSystem.store.pop(key, None)


class TestStorage(StorageBehaviour):
    """The contract on local disk and memory://."""


def _race_worker(st: Storage, payload: bytes, barrier, results) -> None:
    barrier.wait()
    results.put((payload, st.create_if_absent("proc/_race.arrow", payload)))


@pytest.mark.parametrize("as_url", [False, True])
def test_create_race_processes_local(tmp_path, as_url: bool) -> None:
    path = str(tmp_path / "lake")
    st = Storage("file://" + path if as_url else path)
    ctx = multiprocessing.get_context("spawn")
    n = 4
    barrier = ctx.Barrier(n)
    results = ctx.Queue()
    payloads = [f"process {i} ".encode() * 100_000 for i in range(n)]
    procs = [ctx.Process(target=_race_worker, args=(st, p, barrier, results)) for p in payloads]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    winners = [payload for payload, created in outcomes if created]
    assert len(winners) == 1
    assert st.read("proc/_race.arrow") == winners[0]
    assert st.list(include_temporary=True) == st.list()  # no temporary file left behind


def test_local_root_forms(tmp_path) -> None:
    path = str(tmp_path / "lake")
    a, b = Storage(path), Storage("file://" + path + "/")
    assert a.url == b.url == "file://" + path + "/"
    a.write("x/y", b"1")
    assert b.read("x/y") == b"1"
    assert os.path.isfile(os.path.join(path, "x", "y"))
    assert open_storage(a) is a
    assert open_storage(path).url == a.url


def test_local_options(tmp_path) -> None:
    st = Storage(str(tmp_path), {"fsync": False})
    assert st.create_if_absent("f", b"1")
    with pytest.raises(InvalidArgumentError):
        Storage(str(tmp_path), {"key": "s3-only"})


def test_local_temporary_files_hidden(tmp_path) -> None:
    st = Storage(str(tmp_path))
    leftover = tmp_path / "d" / ".trinityfs-tmp-0123456789abcdef"
    leftover.parent.mkdir()
    leftover.write_bytes(b"crashed writer")
    st.write("d/real", b"1")
    assert [e.location for e in st.list()] == ["d/real"]
    assert [e.location for e in st.list(include_temporary=True)] == [
        "d/.trinityfs-tmp-0123456789abcdef",
        "d/real",
    ]


def test_local_error_is_storage_error(tmp_path) -> None:
    st = Storage(str(tmp_path))
    st.write("file", b"1")
    with pytest.raises(StorageError) as err:
        st.write("file/child", b"2")  # a parent is a file
    assert "file/child" in str(err.value)
    assert err.value.__cause__ is not None
    assert not st.exists("file/child")


def test_unknown_protocol_refuses_create() -> None:
    st = Storage(f"simplecache::memory://trinityfs-test-{uuid.uuid4().hex}")
    with pytest.raises(UnsupportedStorageError, match="atomic create-if-absent"):
        st.create_if_absent("_1.arrow", b"x")
    with pytest.raises(UnsupportedStorageError):
        st.probe_conditional_writes()


def test_probe_passes_on_atomic_stores(tmp_path) -> None:
    st = Storage(str(tmp_path))
    st.probe_conditional_writes()
    assert st.list() == []
    assert st.stats.snapshot()["probe"] == 3


def _client_error(status: int, code: str, retries: int = 0):
    from botocore.exceptions import ClientError

    return ClientError(
        {
            "Error": {"Code": code, "Message": code},
            "ResponseMetadata": {"HTTPStatusCode": status, "RetryAttempts": retries},
        },
        "PutObject",
    )


@pytest.mark.parametrize(
    ("err", "outcome"),
    [
        (_client_error(412, "PreconditionFailed"), "exists"),
        (_client_error(412, "PreconditionFailed", retries=1), "ambiguous"),
        (_client_error(409, "ConditionalRequestConflict"), "ambiguous"),
        (_client_error(500, "InternalError"), "ambiguous"),
        (_client_error(503, "SlowDown"), "ambiguous"),
        (_client_error(403, "AccessDenied"), "error"),
        (_client_error(404, "NoSuchBucket"), "error"),
        (_client_error(403, "AccessDenied", retries=2), "ambiguous"),
        (TimeoutError("read timed out"), "ambiguous"),
        (ValueError("bug"), "error"),
    ],
)
def test_conditional_put_error_classification(err: BaseException, outcome: str) -> None:
    assert classify_conditional_put_error(err) == outcome


def test_read_timeout_classified_ambiguous() -> None:
    from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

    assert classify_conditional_put_error(ReadTimeoutError(endpoint_url="x")) == "ambiguous"
    assert classify_conditional_put_error(EndpointConnectionError(endpoint_url="x")) == "ambiguous"
    assert issubclass(AmbiguousWriteError, StorageError)
