"""`Storage`: the lakehouse root on some store, as the format layer needs it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from functools import cache
from typing import Any

from trinityfs.errors import (
    InvalidArgumentError,
    StorageError,
    StorageFileNotFoundError,
    TrinityError,
    UnsupportedStorageError,
)

from .base import PROBE_PREFIX, TEMP_PREFIX, Backend, FileEntry
from .cache import ByteLRUCache
from .stats import StorageStats

DEFAULT_CACHE_BYTES = 256 * 2**20

Bytes = bytes | bytearray | memoryview


class Storage:
    """Files below one root URL, addressed by validated relative locations.

    `url` is a local path or ``file://`` URL, ``memory://...``, ``s3://bucket/prefix``,
    or any other fsspec URL (read and overwrite only: create_if_absent is refused where
    it cannot be atomic). `storage_options` go to the fsspec filesystem; for local disk
    the only option is ``fsync`` (default True). The root is treated as ending in "/".

    Thread-safe, and picklable (the URL and options travel, not connections or cache).
    """

    def __init__(
        self,
        url: str,
        storage_options: dict[str, Any] | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self._init_args = (url, dict(storage_options or {}), cache_bytes)
        self.storage_options = dict(storage_options or {})
        self.backend, self.url = _open_backend(url, self.storage_options)
        self.stats = StorageStats()
        self.cache = ByteLRUCache(cache_bytes)
        self._probe_lock = threading.Lock()
        self._probed = False
        self._probe_error: UnsupportedStorageError | None = None

    # -- reads ---------------------------------------------------------------------------

    def read(self, loc: str) -> bytes:
        """The file's bytes; StorageFileNotFoundError if it is missing."""
        loc = _validate(loc)
        self.stats.record("read")
        with self._errors("read", loc, missing_is_not_found=True):
            data = self.backend.read(loc)
        self.stats.add_bytes(bytes_read=len(data))
        return data

    def read_if_regular(self, loc: str) -> bytes | None:
        """Like `read`, but None when the file is there and is no regular file (local
        disk: a symbolic link, never followed; a directory; a FIFO, never waited on).
        For the markers: the hint is ignored then, the oldest marker refused by name."""
        loc = _validate(loc)
        self.stats.record("read")
        with self._errors("read", loc, missing_is_not_found=True):
            data = self.backend.read_if_regular(loc)
        if data is not None:
            self.stats.add_bytes(bytes_read=len(data))
        return data

    def read_immutable(self, loc: str) -> bytes:
        """Like `read` for a file that never changes (node, definition, root): cached.

        Only verified bytes enter the cache: the content hash in the name when there is
        one, else non-empty and (node files) a complete Arrow file. A failed or short
        read raises CorruptFileError naming the file and is read again next time.
        """
        loc = _validate(loc)
        data = self.cache.get(loc)
        if data is not None:
            self.stats.record("read_cached_hit")
            return data
        data = self.read(loc)
        _checker()(loc, data)
        self.cache.put(loc, data)
        return data

    def forget(self, loc: str) -> None:
        """Drop cached bytes of `loc` (they did not decode: the next read goes to storage)."""
        self.cache.discard(loc)

    def exists(self, loc: str, *, built: bool = False) -> bool:
        """Whether a file exists at `loc` (a warm reader's one request: kept lean).

        `built`: `loc` came from a name function of the format layer (a root's name),
        valid by construction, so it is not validated again.
        """
        if not built:
            loc = _validate(loc)
        self.stats.record("exists")
        try:
            return self.backend.exists(loc)
        except TrinityError:
            raise
        except Exception as e:
            raise self._mapped("exists", loc, e) from e

    def identity(self, loc: str, *, built: bool = False) -> tuple[int, ...] | None:
        """`exists` that also tells this file from one created later at the same name
        (`Backend.identity`; local disk: device, inode, size, mtime); None when missing.
        Counted as an ``exists`` request: it is the same single check."""
        if not built:
            loc = _validate(loc)
        self.stats.record("exists")
        try:
            return self.backend.identity(loc)
        except TrinityError:
            raise
        except Exception as e:
            raise self._mapped("exists", loc, e) from e

    @property
    def placement_choices(self) -> int:
        """Candidate names worth drawing for a new file (`txn/placement.py`)."""
        return self.backend.placement_choices

    def directories_to_make(self, loc: str, *, probe: bool = False) -> int:
        """How many directories writing `loc` (a checked location) would make, as far as
        the store knows cheaply: a hint for placing new files, never a request counted
        in `stats` (local disk: a set lookup, with `probe` at most one stat; object
        stores: nothing). A store that cannot tell answers 0."""
        try:
            return self.backend.directories_to_make(loc, probe=probe)
        except Exception:  # a hint: the write that follows reports any real problem
            return 0

    def mtime(self, loc: str, *, built: bool = False) -> float | None:
        """The file's modification time in POSIX seconds by the store's clock (None where
        the store keeps none); StorageFileNotFoundError if it is missing. One request,
        counted as ``exists`` (the same single check: a stat, a HEAD)."""
        if not built:
            loc = _validate(loc)
        self.stats.record("exists")
        with self._errors("exists", loc, missing_is_not_found=True):
            return self.backend.mtime(loc)

    def size(self, loc: str) -> int:
        """The file's size in bytes; StorageFileNotFoundError if it is missing."""
        loc = _validate(loc)
        self.stats.record("size")
        with self._errors("size", loc, missing_is_not_found=True):
            return self.backend.size(loc)

    def list(
        self, prefix: str = "", *, include_temporary: bool = False, recursive: bool = True
    ) -> list[FileEntry]:
        """Every file below directory `prefix` ("" = the root), sorted by location;
        only those right in it when not `recursive`.

        Locations are relative to the root; `mtime` is POSIX seconds. Temporary files of
        unfinished local writes are left out unless `include_temporary`. Counts one
        ``list`` request per page the store returned (local disk: one per call).
        """
        prefix = prefix.rstrip("/")
        if prefix:
            prefix = _validate(prefix)
        entries: list[FileEntry] = []
        pages = self.backend.list_pages if recursive else self.backend.list_dir_pages
        with self._errors("list", prefix or "/"):
            for page in pages(prefix):
                self.stats.record("list")
                entries.extend(page)
        if not include_temporary:
            entries = [e for e in entries if not _is_temporary(e.location)]
        entries.sort(key=lambda e: e.location)
        return entries

    # -- writes --------------------------------------------------------------------------

    def write(self, loc: str, data: Bytes, *, durable: bool = True) -> None:
        """Overwrite (or create) the file; readers never see a partial file.

        `durable=False` is for best-effort files (the latest-version hint): on local disk
        it skips the fsyncs.
        """
        loc = _validate(loc)
        data = _as_bytes(data)
        self.cache.discard(loc)
        self.stats.record("write", bytes_written=len(data))
        with self._errors("write", loc):
            self.backend.write(loc, data, durable)

    def overwrite_advisory(self, loc: str, data: Bytes) -> None:
        """Overwrite a best-effort file whose readers check what they read (the hint):
        no flush, and on local disk in place (`Backend.overwrite_advisory`)."""
        loc = _validate(loc)
        data = _as_bytes(data)
        self.cache.discard(loc)
        self.stats.record("write", bytes_written=len(data))
        with self._errors("write", loc):
            self.backend.overwrite_advisory(loc, data)

    def write_immutable(self, loc: str, data: Bytes) -> None:
        """Write a new file under a unique name (node, definition) and cache its bytes."""
        loc = _validate(loc)
        data = _as_bytes(data)
        self.stats.record("write", bytes_written=len(data))
        with self._errors("write", loc):
            self.backend.write_new(loc, data)
        self.cache.put(loc, data)

    def write_immutable_many(
        self, files: Mapping[str, Bytes], threads: int | None = None, *, wait: bool = True
    ) -> Callable[[], None]:
        """Write many new unique files in parallel, durable together when this returns.

        On local disk this costs one sync for the batch instead of two fsyncs per file.
        With `wait=False` they are durable when the returned function returns (it raises
        StorageError if a flush failed): local disk flushes them meanwhile, so a commit
        builds its root while its definition files are being flushed.
        """
        batch = [(_validate(loc), _as_bytes(data)) for loc, data in files.items()]
        if not batch:
            return _durable_already

        def write(item: tuple[str, bytes]) -> None:
            loc, data = item
            self.stats.record("write", bytes_written=len(data))
            with self._errors("write", loc):
                self.backend.write_new_unsynced(loc, data)

        threads = threads or self.backend.write_parallelism
        if len(batch) == 1 or threads == 1:
            for item in batch:
                write(item)
        else:
            with ThreadPoolExecutor(max_workers=min(threads, len(batch))) as pool:
                list(pool.map(write, batch))
        first = batch[0][0]
        with self._errors("write", first):
            waiting = self.backend.start_sync([loc for loc, _ in batch])
        for loc, data in batch:
            self.cache.put(loc, data)

        def durable() -> None:
            with self._errors("write", first):
                waiting()

        if wait:
            durable()
        return durable

    def create_if_absent(
        self,
        loc: str,
        data: Bytes,
        *,
        first_durable: Callable[[], None] | None = None,
        on_identity: Callable[[tuple[int, ...]], None] | None = None,
    ) -> bool:
        """Atomically create the file: True if this call created it, False if it existed.

        Never exposes a partial file. Raises AmbiguousWriteError when the store cannot
        say whether the write landed (read the file back to settle), and
        UnsupportedStorageError on a store without atomic create-if-absent.
        `first_durable` (the wait for the flush of the files the new one references) is
        called before the file is created: local disk flushes the new file's content
        beside it (`Backend.create_if_absent_after`); what it raises fails the create.
        `on_identity` is given what `identity` would answer about the file this call
        created, when the store learned it from the create itself (local disk: an fstat
        of the new file's descriptor, instead of another request after it).
        """
        loc = _validate(loc)
        data = _as_bytes(data)
        self._ensure_probed()
        self.stats.record("create", bytes_written=len(data))
        found: tuple[int, ...] | None = None
        with self._errors("create", loc):
            if on_identity is not None:
                created, found = self.backend.create_noting_identity(loc, data, first_durable)
            elif first_durable is None:
                created = self.backend.create_if_absent(loc, data)
            else:
                created = self.backend.create_if_absent_after(loc, data, first_durable)
        if created:
            self.cache.put(loc, data)
            if found is not None and on_identity is not None:
                on_identity(found)
        return created

    def delete(self, loc: str) -> None:
        """Delete the file; a missing file is not an error."""
        loc = _validate(loc)
        self.cache.discard(loc)
        self.stats.record("delete")
        with self._errors("delete", loc):
            self.backend.delete(loc)

    def clock_ahead_millis(self) -> int:
        """How far this process's clock runs ahead of the store's, in ms (0 when it does
        not, or the store keeps no times): a probe file is written, its mtime read, and it
        is deleted (three requests, counted as ``probe``). Expiration moves its cutoff back
        by this, so a clock ahead of the writers' store never makes their young files look
        old. Object stores keep whole seconds: up to 1 s is read as "ahead" (conservative)."""
        loc = f"{PROBE_PREFIX}{uuid.uuid4().hex}"
        try:
            self.stats.record("probe")
            before = time.time()
            with self._errors("probe", loc):
                self.backend.write(loc, b"clock\n", False)
            self.stats.record("probe")
            with self._errors("probe", loc):
                stamp = self.backend.mtime(loc)
        finally:
            self.stats.record("probe")
            with suppress(Exception):  # best effort: expiration sweeps leftover probes
                self.backend.delete(loc)
        return 0 if stamp is None else max(0, int((before - stamp) * 1000))

    # -- conditional-write probe -----------------------------------------------------------

    def probe_conditional_writes(self) -> None:
        """Check that the store refuses a second create of the same file.

        Creates a unique probe file at the root twice and deletes it; raises
        UnsupportedStorageError if the second create also succeeded (an S3-compatible
        store that silently ignores ``If-None-Match``). The verdict is remembered; the
        first `create_if_absent` on S3 runs this once per instance.
        """
        try:
            self._run_probe()
        except UnsupportedStorageError as e:
            self._probe_error = e
            raise
        self._probed = True

    def _run_probe(self) -> None:
        loc = f"{PROBE_PREFIX}{uuid.uuid4().hex}"
        try:
            self.stats.record("probe")
            with self._errors("probe", loc):
                first = self.backend.create_if_absent(loc, b"probe 1\n")
            if not first:
                raise UnsupportedStorageError(
                    f"{self.url}: the first create of the unique probe file {loc} "
                    "reported it as existing; conditional writes are not reliable"
                )
            self.stats.record("probe")
            with self._errors("probe", loc):
                second = self.backend.create_if_absent(loc, b"probe 2\n")
        finally:
            self.stats.record("probe")
            # best effort: a leftover probe file harms no reader
            with suppress(Exception):
                self.backend.delete(loc)
        if second:
            raise UnsupportedStorageError(
                f"{self.url} ignores conditional writes (If-None-Match: *): a second create "
                "of the same file succeeded, so concurrent commits could overwrite each "
                "other; use a store with conditional writes (AWS S3, recent MinIO, ...)"
            )

    def _ensure_probed(self) -> None:
        if not self.backend.needs_probe or self._probed:
            return
        with self._probe_lock:
            if self._probe_error is not None:
                raise UnsupportedStorageError(str(self._probe_error)) from self._probe_error
            if not self._probed:
                self.probe_conditional_writes()

    # -- helpers -------------------------------------------------------------------------

    def url_of(self, loc: str) -> str:
        """The full URL of `loc` (for messages and for engines given file paths)."""
        return self.url + _validate(loc)

    def child(self, prefix: str) -> Storage:
        """A Storage rooted at directory `prefix` (e.g. a full export), sharing the stats."""
        sub = Storage(self.url_of(prefix.rstrip("/")), self.storage_options, self.cache.max_bytes)
        sub.stats = self.stats
        child = getattr(self.backend, "child", None)
        if child is not None:  # local disk: stay confined below this root, links unfollowed
            sub.backend = child(_validate(prefix.rstrip("/")))
        return sub

    def _errors(self, op: str, loc: str, *, missing_is_not_found: bool = False) -> _StoreErrors:
        """Around one call to the store: its exceptions become trinityfs errors."""
        return _StoreErrors(self, op, loc, missing_is_not_found)

    def _mapped(
        self, op: str, loc: str, e: Exception, *, missing_is_not_found: bool = False
    ) -> Exception:
        """The trinityfs error for a store's exception `e`."""
        if isinstance(e, FileNotFoundError):
            if missing_is_not_found:
                return StorageFileNotFoundError(loc)
            return StorageError(f"{op} of {loc!r} under {self.url} failed: {e}")
        return StorageError(f"{op} of {loc!r} under {self.url} failed: {type(e).__name__}: {e}")

    def __getstate__(self) -> dict[str, Any]:
        return {"args": self._init_args}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(*state["args"])

    def __repr__(self) -> str:
        return f"Storage({self.url!r})"


class _StoreErrors:
    """`Storage._errors`: a store's exception (not a TrinityError, not a BaseException
    such as KeyboardInterrupt) raised as `Storage._mapped` says, from the original. A
    plain class: every storage call enters one, and a generator-based context manager
    costs ~1.2 us more per use (about 7 per table create)."""

    __slots__ = ("_loc", "_missing_is_not_found", "_op", "_storage")

    def __init__(self, storage: Storage, op: str, loc: str, missing_is_not_found: bool) -> None:
        self._storage = storage
        self._op = op
        self._loc = loc
        self._missing_is_not_found = missing_is_not_found

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, TrinityError):
            return False
        raise self._storage._mapped(
            self._op, self._loc, exc, missing_is_not_found=self._missing_is_not_found
        ) from exc


def open_storage(
    url: str | Storage,
    storage_options: dict[str, Any] | None = None,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> Storage:
    """A Storage for `url`, or `url` itself when it already is one."""
    if isinstance(url, Storage):
        return url
    return Storage(url, storage_options, cache_bytes)


@cache
def _validator() -> Any:
    from trinityfs.format.paths import validate_location

    return validate_location


@cache
def _checker() -> Any:
    from trinityfs.format.integrity import check_file_bytes

    return check_file_bytes


def _validate(loc: str) -> str:
    return _validator()(loc)


def _as_bytes(data: Bytes) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"file contents must be bytes, not {type(data).__name__}")


def _is_temporary(loc: str) -> bool:
    return loc.rpartition("/")[2].startswith(TEMP_PREFIX)


def _local_path_of(url: str) -> str:
    """A `file://` (or fsspec's `local://`) URL as RFC 8089 reads it: `file:///x` and
    `file://localhost/x` are /x; another host is refused (fsspec would read
    `file://data/lake` as the relative path data/lake, so a missing slash put a
    lakehouse under the working directory)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("file", "local"):
        return url
    host, slash, path = rest.partition("/")
    if host not in ("", "localhost"):
        raise InvalidArgumentError(
            f"{scheme} URL {url!r} names the host {host!r}: use {scheme}:///{host}/{path} or "
            "a plain path for a local directory"
        )
    if not slash:
        raise InvalidArgumentError(f"{scheme} URL {url!r} names no directory")
    return slash + path


def _open_backend(url: str, options: dict[str, Any]) -> tuple[Backend, str]:
    """The backend for `url` and the normalized root URL (ending in "/")."""
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    from .fsspec_backend import FsspecBackend, MemoryBackend
    from .local import LocalBackend

    if not isinstance(url, str) or not url:
        raise InvalidArgumentError(f"storage URL must be a non-empty string, not {url!r}")
    protocol = fsspec.utils.get_protocol(url)
    options = dict(options)
    # local disk only; other stores are durable when a write returns, so there it has no
    # effect (it must not reach their filesystem: s3fs failed on it at the first request)
    fsync = _fsync_option(options.pop("fsync", True))
    if "\x00" in url:
        raise InvalidArgumentError(f"storage URL {url!r} contains a NUL character")
    if protocol in ("file", "local"):
        url = _local_path_of(url)
        if options:
            raise InvalidArgumentError(
                f"unknown storage options for local disk: {sorted(options)} (only 'fsync')"
            )
        root = LocalFileSystem._strip_protocol(url).rstrip("/") or "/"
        return LocalBackend(root, fsync=fsync), "file://" + root.rstrip("/") + "/"
    try:
        fs, root = fsspec.core.url_to_fs(url, **options)
    except Exception as e:
        raise StorageError(f"cannot open storage {url}: {type(e).__name__}: {e}") from e
    normalized = url.rstrip("/") + "/"
    if protocol == "memory":
        return MemoryBackend(fs, root, normalized), normalized
    if _is_s3(fs):
        from .s3 import S3Backend

        return S3Backend(fs, root, normalized), normalized
    return FsspecBackend(fs, root, normalized), normalized


def _fsync_option(value: Any) -> bool:
    """The `fsync` storage option: a boolean (JSON true/false, or the text of one)."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("true", "false"):
        return text == "true"
    raise InvalidArgumentError(f"storage option 'fsync' must be true or false, not {value!r}")


def _is_s3(fs: Any) -> bool:
    try:
        from s3fs import S3FileSystem
    except ImportError:
        return False
    return isinstance(fs, S3FileSystem)


def _durable_already() -> None:
    """Nothing was written, so nothing to wait for."""
