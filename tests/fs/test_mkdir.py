"""mkdir and makedirs: namespaces (top level only), one commit each."""

from __future__ import annotations

import errno

import pytest


def test_mkdir_creates_a_namespace(fs, lake):
    fs.mkdir("/sales")
    assert lake.latest_version() == 1
    assert fs.isdir("/sales") and fs.ls("/sales") == []
    fs.mkdir("trinity://hr", properties={"owner": "people"})
    assert fs.info("/hr")["properties"] == {"owner": "people"}


def test_mkdir_existing(fs, lake):
    fs.mkdir("/sales")
    with pytest.raises(FileExistsError):
        fs.mkdir("/sales")
    with pytest.raises(FileExistsError):
        fs.mkdir("/")
    with pytest.raises(FileExistsError):
        fs.mkdir("/v")  # the versions directory
    fs.makedirs("/sales", exist_ok=True)
    fs.makedirs("/", exist_ok=True)
    with pytest.raises(FileExistsError):
        fs.makedirs("/sales")
    assert lake.latest_version() == 1


def test_mkdir_only_at_the_top(fs, lake):
    fs.mkdir("/sales")
    for path in ("/sales/sub", "/a/b/c"):
        with pytest.raises(PermissionError) as info:
            fs.mkdir(path)
        assert info.value.errno == errno.EPERM
        with pytest.raises(PermissionError):
            fs.makedirs(path, exist_ok=True)
    assert lake.latest_version() == 1


def test_mkdir_read_only_and_invalid(fs, lake):
    fs.mkdir("/sales")
    with pytest.raises(PermissionError) as info:
        fs.mkdir("/v/1/x")
    assert info.value.errno == errno.EROFS
    with pytest.raises(ValueError) as info:
        fs.mkdir("/bad name")
    assert info.value.errno == errno.EINVAL
    assert lake.latest_version() == 1


def test_mkdir_namespace_v(fs):
    fs.mkdir("/v/latest/v")
    assert fs.info("/v/latest/v")["kind"] == "namespace"
    fs.makedirs("/v/latest/v", exist_ok=True)
    fs.rmdir("/v/latest/v")
    assert not fs.exists("/v/latest/v")
