"""pandas (with botocore installed) retries an fsspec open that raised PermissionError
once more with `anon=True`, for public buckets. trinity:// refused that keyword, so every
write the catalog refuses with PermissionError -- `to_json("trinity://v/1/ns/t")`
(read-only version, EROFS), a file at the top level or below a table (EPERM) -- was
reported as `TypeError: TrinityFileSystem got unknown option(s) 'anon'`, hiding why.
Now `anon` is accepted (an object store's anonymous access; nothing for a local or memory
lakehouse): the retry fails the same way and the real PermissionError reaches the
user."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("botocore")  # pandas retries with anon=True only when it is installed

from trinityfs import Lakehouse  # noqa: E402
from trinityfs.fs.common import filesystem_config  # noqa: E402

GOOD = {"kind": "table", "definition": {"table_format": "DELTA"}}


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("trinity://v/1/ns/t", "read-only"),
        ("trinity://top", "inside a namespace"),
        ("trinity://ns/t/x", ""),
    ],
)
def test_a_refused_write_through_pandas_says_why(tmp_path, path, word):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    with pytest.raises(PermissionError, match=word):
        pd.Series(GOOD).to_json(path, storage_options={"root": root})
    assert Lakehouse.open(root).latest_version() == 1


def test_anon_reaches_an_object_store_only(tmp_path):
    remote = filesystem_config("s3://bucket/lake", None, None, None, {"anon": True})
    assert remote.storage_options["anon"] is True
    local = filesystem_config(str(tmp_path), None, None, None, {"anon": True})
    assert "anon" not in local.storage_options
