"""The REST server's configuration and version prefixes over the catalog's one reader
and one selector precedence (in-process: no server is started)."""

from __future__ import annotations

import pytest

from trinityfs.catalog import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.rest.options import ServerConfig
from trinityfs.rest.selector import NoSuchWarehouseError, resolve
from trinityfs.rest.server import build_service


@pytest.fixture
def lake(tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("a")
    lake.export("7", 1)  # named like a version
    lake.export("2000-01-01", 0)  # named like a time
    lake.create_namespace("b")
    return lake


def test_prefixes_follow_the_catalog_precedence(lake):
    assert resolve(lake, "v/1").version == 1 and resolve(lake, "v/1").export is None
    export = resolve(lake, "v/export:7")  # digits are a version; export: reaches the export
    assert (export.export, export.version, export.prefix) == ("7", 1, "v/export%3A7")
    dated = resolve(lake, "v/2000-01-01")  # a bare export name wins over a time
    assert dated.export == "2000-01-01" and dated.version == 0
    assert resolve(lake, "v/latest").version is None and not resolve(lake, "latest").read_only
    with pytest.raises(NoSuchWarehouseError, match="v/99"):
        resolve(lake, "v/99")
    with pytest.raises(NoSuchWarehouseError):
        resolve(lake, "v/time:1999-01-01")


def test_a_pinned_environment_is_refused_not_ignored(lake, monkeypatch):
    monkeypatch.setenv("TRINITYFS_VERSION", "1")
    with pytest.raises(InvalidArgumentError, match="TRINITYFS_VERSION"):
        build_service(ServerConfig(root=lake.url))
    monkeypatch.delenv("TRINITYFS_VERSION")
    assert not build_service(ServerConfig(root=lake.url)).catalog.read_only
