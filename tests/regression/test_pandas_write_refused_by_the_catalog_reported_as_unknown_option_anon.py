"""pandas (with botocore installed) retries an fsspec open that raised PermissionError
once more with `anon=True`, for public buckets. trinity:// refused that keyword, so every
write the catalog refuses with PermissionError -- `to_json("trinity://v/1/ns/t")`
(read-only version, EROFS), a file at the top level or below a table (EPERM) -- was
reported as `TypeError: TrinityFileSystem got unknown option(s) 'anon'`, hiding why.
Now `anon` is accepted and ignored (f6bbd53 sent it to an object store's options, so on a
private S3 lakehouse the anonymous retry failed at its first read instead: review7 R11):
the retry fails the same way and the real PermissionError reaches the user."""

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


def test_anon_changes_no_storage_option(tmp_path):
    # the retry opens the store as the first open did (on a private S3 lakehouse an
    # anonymous retry failed at its first read, hiding the catalog's PermissionError)
    for root in ("s3://bucket/lake", str(tmp_path)):
        config = filesystem_config(root, {"key": "k"}, None, None, {"anon": True})
        assert config.storage_options == {"key": "k"}
