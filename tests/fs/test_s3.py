"""The filesystem on an s3:// lakehouse: storage_options pass through to the store."""

from __future__ import annotations

import pickle
import uuid

import fsspec
import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

pytestmark = pytest.mark.s3


def test_s3_round_trip(s3_bucket, s3_storage_options):
    root = f"s3://{s3_bucket}/{uuid.uuid4().hex}/lake"
    Lakehouse.create(root, storage_options=s3_storage_options)
    fs = fsspec.filesystem(
        "trinity", root=root, storage_options=s3_storage_options, skip_instance_cache=True
    )
    assert isinstance(fs, TrinityFileSystem)
    fs.mkdir("/sales")
    with fs.transaction:
        fs.pipe("/sales/orders", b'{"kind": "table", "definition": {"table_format": "ICEBERG"}}')
        fs.touch("/sales/empty")
    assert fs.ls("/sales", detail=False) == ["/sales/empty", "/sales/orders"]
    assert fs.lake.latest_version() == 2
    clone = pickle.loads(pickle.dumps(fs))  # a worker gets the options too
    assert clone.cat("/v/2/sales/orders") == fs.cat("/sales/orders")
    assert fs.find("/") == ["/sales/empty", "/sales/orders"]
