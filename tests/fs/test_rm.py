"""rm, rm_file, rmdir: each call is one commit."""

from __future__ import annotations

import errno

import pytest


def test_rm_a_file(sample, lake):
    sample.rm("/sales/orders")
    assert lake.latest_version() == 5
    assert not sample.exists("/sales/orders")
    assert sample.exists("/v/4/sales/orders")  # still in the old version
    sample.rm_file("trinity://sales/big_orders")
    assert sample.ls("/sales") == []


def test_rm_missing(sample):
    with pytest.raises(FileNotFoundError):
        sample.rm("/sales/nope")
    with pytest.raises(FileNotFoundError):
        sample.rm("/nope/x")
    with pytest.raises(FileNotFoundError):
        sample.rm("/sales/*x*")  # a glob matching nothing


def test_rm_many_is_one_commit(sample, lake):
    sample.rm(["/sales/orders", "/sales/big_orders"])
    assert lake.latest_version() == 5
    assert sample.ls("/sales") == []


def test_rm_glob(sample, lake):
    # an exact path never expands (a name may hold glob characters): patterns go
    # through glob explicitly
    with pytest.raises(FileNotFoundError):
        sample.rm("/sales/*orders")
    assert lake.latest_version() == 4
    sample.rm(sample.glob("/sales/*orders"))
    assert sample.ls("/sales") == []
    assert lake.latest_version() == 5


def test_rm_namespace_needs_recursive(sample, lake):
    with pytest.raises(IsADirectoryError):
        sample.rm("/sales")
    with pytest.raises(IsADirectoryError):
        sample.rm_file("/sales")
    sample.rm("/sales", recursive=True)
    assert lake.latest_version() == 5
    assert sample.ls("/", detail=False) == ["/staging"]
    assert lake.changes(5)  # namespace, table and view dropped together


def test_rm_everything(sample, lake):
    sample.rm("/", recursive=True)
    assert sample.ls("/") == []
    assert lake.latest_version() == 5


def test_rmdir(sample, lake):
    sample.rmdir("/staging")
    assert not sample.exists("/staging")
    with pytest.raises(OSError) as info:
        sample.rmdir("/sales")
    assert info.value.errno == errno.ENOTEMPTY
    with pytest.raises(FileNotFoundError):
        sample.rmdir("/staging")
    with pytest.raises(NotADirectoryError):
        sample.rmdir("/sales/orders")
    with pytest.raises(OSError) as info:
        sample.rmdir("/")
    assert info.value.errno == errno.EBUSY
    assert lake.latest_version() == 5


def test_rm_read_only(sample, lake):
    for path in ("/v/2/sales/orders", "/v/2/sales"):
        with pytest.raises(PermissionError) as info:
            sample.rm(path, recursive=True)
        assert info.value.errno == errno.EROFS
    assert lake.latest_version() == 4


def test_rm_with_maxdepth(sample, lake):
    sample.rm("/sales", recursive=True, maxdepth=1)
    assert not sample.exists("/sales")
    sample.pipe("/staging/t", b"")
    version = lake.latest_version()
    with pytest.raises(OSError) as info:
        sample.rm("/", recursive=True, maxdepth=1)  # finds namespaces only: not empty
    assert info.value.errno == errno.ENOTEMPTY
    assert lake.latest_version() == version
