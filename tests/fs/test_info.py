"""info: type, size, kind, version (and properties): a point lookup."""

from __future__ import annotations

import errno
from datetime import datetime

import pytest
from fs_helpers import make_fs


def test_info_of_a_table(sample):
    info = sample.info("/sales/orders")
    assert info["name"] == "/sales/orders"
    assert info["type"] == "file" and info["kind"] == "table" and info["version"] == 4
    assert info["size"] == len(sample.cat("/sales/orders"))
    assert info["id"]
    assert sample.size("/sales/orders") == info["size"]
    assert sample.info("trinity://sales/big_orders")["kind"] == "view"


def test_info_of_a_namespace_has_its_properties(sample):
    info = sample.info("/sales")
    assert info["type"] == "directory" and info["kind"] == "namespace"
    assert info["properties"] == {"owner": "analytics"} and info["size"] == 0
    assert sample.info("/staging")["properties"] == {}


def test_info_of_version_roots(sample):
    root = sample.info("/")
    assert root["type"] == "directory" and root["kind"] == "version" and root["version"] == 4
    assert isinstance(root["created"], datetime)
    assert sample.info("/v/2")["version"] == 2
    assert sample.info("/v/latest")["version"] == 4
    versions = sample.info("/v")
    assert versions["kind"] == "versions" and versions["latest"] == 4


def test_info_missing(sample):
    with pytest.raises(FileNotFoundError) as info:
        sample.info("/sales/nope")
    assert info.value.errno == errno.ENOENT
    assert "sales.nope" in str(info.value)
    with pytest.raises(FileNotFoundError, match="namespace 'nope' does not exist"):
        sample.info("/nope/orders")
    with pytest.raises(FileNotFoundError):
        sample.info("/sales/orders/deeper")
    with pytest.raises(FileNotFoundError):
        sample.info("/bad name")  # a name that breaks a rule cannot exist: ENOENT


def test_exists_isdir_isfile(sample):
    fs = sample
    assert fs.exists("/") and fs.isdir("/") and not fs.isfile("/")
    assert fs.exists("/v") and fs.isdir("/v")
    assert fs.isdir("/sales") and not fs.isfile("/sales")
    assert fs.isfile("/sales/orders") and not fs.isdir("/sales/orders")
    assert fs.isfile("/v/2/sales/orders") and not fs.exists("/v/1/sales/orders")
    for missing in ("/nope", "/sales/nope", "/sales/orders/x", "/v/99", "/bad name", "/v/x"):
        assert not fs.exists(missing), missing


def test_exists_needs_no_definition_read(sample, root):
    fs = make_fs(root)
    fs.info("/")  # warm the version probe path
    stats = fs.lake.storage.stats
    stats.reset()
    assert fs.isfile("/sales/orders")
    counts = stats.snapshot()
    assert counts["read"] <= 12, counts  # markers, probes and a few tree nodes


def test_info_on_a_missing_lakehouse(tmp_path):
    fs = make_fs(str(tmp_path / "none"))
    with pytest.raises(FileNotFoundError, match="no lakehouse"):
        fs.info("/")
    assert not fs.exists("/")


def test_namespace_properties(sample, lake):
    fs = sample
    assert fs.properties("/sales") == {"owner": "analytics"}
    assert fs.getxattr("/sales", "owner") == "analytics"
    assert fs.listxattr("/sales") == ["owner"]
    fs.setxattrs("/sales", tier="gold", owner=None)  # None removes
    assert fs.properties("/sales") == {"tier": "gold"}
    version = lake.latest_version()
    fs.set_properties("/sales", {"tier": "gold"})  # unchanged: no commit
    assert lake.latest_version() == version
    fs.set_properties("/sales", {"a": "1"}, removals=["tier"])
    assert fs.info("/sales")["properties"] == {"a": "1"}
    assert lake.latest_version() == version + 1
    fs.removexattr("/sales", "a")
    assert fs.properties("/sales") == {}
    with pytest.raises(OSError) as info:
        fs.getxattr("/sales", "a")
    assert info.value.errno == errno.ENODATA
    assert fs.properties("/v/2/sales") == {"owner": "analytics"}
    with pytest.raises(NotADirectoryError):
        fs.properties("/sales/orders")
    with pytest.raises(ValueError):
        fs.set_properties("/sales", {"a": 1})


def test_ukey_changes_only_with_content(sample):
    fs = sample
    key = fs.ukey("/sales/orders")
    fs.pipe("/sales/other", b"")  # an unrelated commit
    assert fs.ukey("/sales/orders") == key
    assert fs.checksum("/sales/orders") == fs.checksum("/v/2/sales/orders")
    fs.pipe("/sales/orders", b'{"kind": "table"}')
    assert fs.ukey("/sales/orders") != key
