"""S3 (and S3-compatible) backend: create-if-absent as a conditional PUT.

`create_if_absent` sends one ``PutObject`` with ``IfNoneMatch="*"`` straight through
s3fs's aiobotocore client, not through s3fs's own retry loop: a retried conditional PUT
whose first attempt landed gets 412, which must not be mistaken for "someone else won".
botocore reports the retries it made (``RetryAttempts``), so an answer after a retry is
treated as ambiguous.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal

from fsspec.asyn import sync

from trinityfs.errors import AmbiguousWriteError, InvalidArgumentError

from .base import FileEntry, to_epoch
from .fsspec_backend import FsspecBackend

Outcome = Literal["exists", "ambiguous", "error"]


class S3Backend(FsspecBackend):
    """Objects below s3://bucket/prefix/ through an s3fs ``S3FileSystem``."""

    needs_probe = True

    def __init__(self, fs: Any, root: str, url: str) -> None:
        super().__init__(fs, root, url)
        bucket, _, prefix = self.root.partition("/")
        if not bucket:
            raise InvalidArgumentError(f"S3 URL names no bucket: {url}")
        self.bucket = bucket
        self.key_prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def _key(self, loc: str) -> str:
        return self.key_prefix + loc

    def create_if_absent(self, loc: str, data: bytes) -> bool:
        try:
            sync(self.fs.loop, self._put_if_none_match, self._key(loc), data)
        except Exception as e:
            outcome = classify_conditional_put_error(e)
            if outcome == "exists":
                return False
            if outcome == "ambiguous":
                raise AmbiguousWriteError(
                    f"conditional create of {loc!r} under {self.url} may or may not have "
                    f"landed ({type(e).__name__}: {e}); read it back to settle"
                ) from e
            raise
        finally:
            self.fs.invalidate_cache(self._path(loc))
        return True

    async def _put_if_none_match(self, key: str, data: bytes) -> Any:
        await self.fs.set_session()
        client = await self.fs.get_s3(self.bucket)
        kwargs = self.fs._get_s3_method_kwargs(
            client.put_object, Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*"
        )
        return await client.put_object(**kwargs)

    def read(self, loc: str) -> bytes:
        # one GET: with max_concurrency > 1 s3fs sends a HEAD first (and a LIST on a miss)
        return self.fs.cat_file(self._path(loc), max_concurrency=1)

    def exists(self, loc: str) -> bool:
        try:
            self._head(loc)
        except FileNotFoundError:
            return False
        return True

    def size(self, loc: str) -> int:
        return int(self._head(loc)["ContentLength"])

    def mtime(self, loc: str) -> float | None:
        return to_epoch(self._head(loc).get("LastModified"))

    def _head(self, loc: str) -> dict[str, Any]:
        # one HEAD; fs.info would add a LIST on a miss and may answer from its listing cache
        return self.fs.call_s3("head_object", Bucket=self.bucket, Key=self._key(loc))

    def list_pages(self, prefix: str) -> Iterator[list[FileEntry]]:
        key_prefix = self._key(prefix + "/") if prefix else self.key_prefix
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": key_prefix}
        while True:
            resp = self.fs.call_s3("list_objects_v2", **kwargs)
            yield [
                FileEntry(
                    obj["Key"][len(self.key_prefix) :],
                    int(obj["Size"]),
                    to_epoch(obj.get("LastModified")),
                )
                for obj in resp.get("Contents", [])
                if not obj["Key"].endswith("/")
            ]
            if not resp.get("IsTruncated"):
                return
            kwargs["ContinuationToken"] = resp["NextContinuationToken"]


def classify_conditional_put_error(err: BaseException) -> Outcome:
    """What a failed ``PutObject(IfNoneMatch="*")`` means.

    - 412 PreconditionFailed on the first attempt: the object already existed ("exists").
    - any error after botocore retried (an earlier attempt may have landed), 409
      ConditionalRequestConflict (a racing write), 5xx, timeouts and broken
      connections: "ambiguous".
    - anything else (403, 404 NoSuchBucket, bad credentials...): "error".
    """
    from botocore.exceptions import ClientError, HTTPClientError
    from botocore.exceptions import ConnectionError as BotoConnectionError

    if isinstance(err, ClientError):
        response = err.response or {}
        code = response.get("Error", {}).get("Code", "")
        meta = response.get("ResponseMetadata", {})
        status = int(meta.get("HTTPStatusCode") or 0)
        if meta.get("RetryAttempts", 0):
            return "ambiguous"
        if status == 412 or code == "PreconditionFailed":
            return "exists"
        if status == 409 or code == "ConditionalRequestConflict" or status >= 500:
            return "ambiguous"
        return "error"
    if isinstance(err, BotoConnectionError | HTTPClientError | TimeoutError | asyncio.TimeoutError):
        return "ambiguous"
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - aiobotocore depends on aiohttp
        return "error"
    if isinstance(err, aiohttp.ClientError):
        return "ambiguous"
    return "error"
