"""`fsync` in the storage options (e.g. $TRINITYFS_STORAGE_OPTIONS shared by local and
S3 lakehouses) reached s3fs when opening an S3 lakehouse, whose first request then
failed with "AioSession.__init__() got an unexpected keyword argument 'fsync'". It is
the local-disk option it is documented as: other stores are durable when a write
returns, so it has no effect there and never reaches their filesystem. Its value is a
boolean: the text "false" (from JSON text) meant True before (bool("false")).
"""

from __future__ import annotations

import pytest

from trinityfs.errors import InvalidArgumentError
from trinityfs.storage import Storage


@pytest.mark.parametrize("url", ["s3://bucket/lake", "memory://fsync-option-test"])
def test_fsync_does_not_reach_other_filesystems(url):
    options = {"fsync": False}
    if url.startswith("s3://"):
        options.update(endpoint_url="http://127.0.0.1:9", key="k", secret="s")
    storage = Storage(url, options)
    fs = storage.backend.fs
    assert "fsync" not in fs.storage_options
    assert storage.storage_options["fsync"] is False  # kept for pickling, like the others


def test_fsync_text_values_are_read_as_booleans(tmp_path):
    assert Storage(str(tmp_path), {"fsync": "false"}).backend.fsync is False
    assert Storage(str(tmp_path), {"fsync": "True"}).backend.fsync is True
    with pytest.raises(InvalidArgumentError, match="'fsync' must be true or false"):
        Storage(str(tmp_path), {"fsync": "no"})
    with pytest.raises(InvalidArgumentError, match="'fsync'"):
        Storage("memory://fsync-option-bad", {"fsync": 0})
