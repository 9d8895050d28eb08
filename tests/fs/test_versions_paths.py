"""The path grammar, and reading (never writing) old versions, times and exports."""

from __future__ import annotations

import errno
import time
from datetime import UTC, datetime, timedelta

import pytest

from trinityfs import Lakehouse
from trinityfs.fs.paths import parse_path, parse_time, strip_protocol


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("", "/"),
        ("/", "/"),
        ("trinity://", "/"),
        ("trinity://sales/orders", "/sales/orders"),
        ("trinity:///sales/orders", "/sales/orders"),
        ("trinity::sales", "/sales"),
        ("//sales//orders/", "/sales/orders"),
        ("sales", "/sales"),
    ],
)
def test_strip_protocol(given, canonical):
    assert strip_protocol(given) == canonical


def test_parse_latest_paths():
    root = parse_path("/")
    assert root.is_root and root.writable and root.depth == 0 and root.prefix == ""
    ns = parse_path("trinity://sales")
    assert ns.is_namespace and ns.namespace == "sales" and ns.writable
    obj = parse_path("/sales/orders")
    assert obj.is_object and (obj.namespace, obj.name) == ("sales", "orders")
    deep = parse_path("/sales/orders/x")
    assert deep.depth == 3 and not deep.is_object and deep.extra == ("x",)


def test_parse_versions_paths():
    v = parse_path("/v")
    assert v.is_versions_dir and not v.writable
    latest = parse_path("/v/latest/v/t")
    assert latest.writable and latest.ref.is_latest and latest.prefix == "/v/latest"
    assert (latest.namespace, latest.name) == ("v", "t")
    n = parse_path("/v/12/sales/orders")
    assert n.ref.kind == "number" and n.ref.number == 12 and not n.writable
    assert n.with_names("sales", "items") == "/v/12/sales/items"
    t = parse_path("/v/2026-01-01T00:00:00Z/sales")
    assert t.ref.kind == "label" and t.ref.millis == 1767225600000 and not t.writable
    export = parse_path("/v/nightly/sales")
    assert export.ref.kind == "label" and export.ref.millis is None


@pytest.mark.parametrize(
    "text, millis",
    [
        ("2026-01-01T00:00:00Z", 1767225600000),
        ("2026-01-01T01:00:00+01:00", 1767225600000),
        ("2026-01-01T00:00:00", 1767225600000),  # no offset: UTC
        ("2026-01-01", 1767225600000),
        ("2026-01-01T00:00:00.250Z", 1767225600250),
        ("nightly", None),
        ("2026-13-01", None),
        ("12", None),
    ],
)
def test_parse_time(text, millis):
    assert parse_time(text) == millis


def test_version_directories_read_old_versions(sample):
    fs = sample
    assert fs.ls("/v/1", detail=False) == ["/v/1/sales"]
    assert fs.ls("/v/1/sales", detail=False) == []
    assert fs.ls("/v/2/sales", detail=False) == ["/v/2/sales/orders"]
    assert fs.info("/v/3/sales/big_orders")["kind"] == "view"
    assert fs.info("/v/3/sales/big_orders")["version"] == 3
    assert fs.ls("/v/latest", detail=False) == ["/v/latest/sales", "/v/latest/staging"]
    assert fs.ls("/v", detail=False) == ["/v/0", "/v/1", "/v/2", "/v/3", "/v/4", "/v/latest"]
    with pytest.raises(FileNotFoundError):
        fs.ls("/v/99")
    with pytest.raises(FileNotFoundError):
        fs.info("/v/not-a-version-or-export")


def test_v_is_hidden_at_the_root(sample):
    assert "/v" not in sample.ls("/", detail=False)
    assert sample.info("/v")["kind"] == "versions"


def test_namespace_named_v_is_reached_through_v_latest(sample):
    fs = sample
    fs.mkdir("/v/latest/v")
    fs.pipe("/v/latest/v/t", b"")
    assert fs.ls("/v/latest/v", detail=False) == ["/v/latest/v/t"]
    assert "/v/latest/v" in fs.ls("/v/latest", detail=False)
    assert "/v" not in fs.ls("/", detail=False)  # still the versions directory
    assert fs.info("/v")["kind"] == "versions"
    latest = fs.lake.latest_version()
    assert fs.cat(f"/v/{latest}/v/t") == fs.cat("/v/latest/v/t")
    assert "/v/latest/v/t" not in fs.find("/")  # find / is the root's namespaces only


def test_time_paths(sample, lake):
    fs = sample
    created = lake.version_info(2).created_at_millis
    when = datetime.fromtimestamp(created / 1000, UTC).isoformat(timespec="milliseconds")
    assert fs.ls(f"/v/{when}/sales", detail=False) == [f"/v/{when}/sales/orders"]
    assert fs.info(f"/v/{when}")["version"] == 2
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert fs.info(f"/v/{future}")["version"] == 4
    with pytest.raises(FileNotFoundError, match="no version at or before"):
        fs.ls("/v/2000-01-01T00:00:00Z")


def test_old_versions_are_read_only(sample, lake):
    fs = sample
    version = lake.latest_version()
    when = datetime.now(UTC).isoformat()
    for path in ("/v/2/sales/new", f"/v/{when}/sales/new", "/v/2/sales/orders"):
        with pytest.raises(PermissionError) as info:
            fs.pipe(path, b"")
        assert info.value.errno == errno.EROFS
    for op in (
        lambda: fs.rm("/v/2/sales/orders"),
        lambda: fs.mkdir("/v/2/x"),
        lambda: fs.rmdir("/v/2/sales"),
        lambda: fs.mv("/v/2/sales/orders", "/sales/x"),
        lambda: fs.touch("/v/2/sales/orders"),
        lambda: fs.open("/v/2/sales/orders", "wb"),
        lambda: fs.set_properties("/v/2/sales", {"a": "b"}),
        lambda: fs.rm("/v", recursive=True),
    ):
        with pytest.raises(PermissionError) as info:
            op()
        assert info.value.errno == errno.EROFS
    assert lake.latest_version() == version


def test_v_latest_is_writable(sample, lake):
    sample.pipe("/v/latest/sales/via_latest", b"")
    assert sample.exists("/sales/via_latest")


def test_restore_an_old_definition_with_cp(sample, lake):
    fs = sample
    old = fs.cat("/sales/orders")
    fs.pipe("/sales/orders", b'{"kind": "table", "definition": {"table_format": "DELTA"}}')
    assert fs.cat("/sales/orders") != old
    fs.cp("/v/2/sales/orders", "/sales/orders")
    assert fs.cat("/sales/orders") == old  # same definition, same id


@pytest.mark.skipif(not hasattr(Lakehouse, "export"), reason="the catalog has no exports yet")
def test_export_paths(sample, lake):
    fs = sample
    lake.export("nightly", version=2)
    assert "/v/nightly" in fs.ls("/v", detail=False)
    assert fs.info("/v/nightly")["kind"] == "export"
    assert fs.ls("/v/nightly/sales", detail=False) == ["/v/nightly/sales/orders"]
    assert fs.cat("/v/nightly/sales/orders") == fs.cat("/v/2/sales/orders")
    with pytest.raises(PermissionError):
        fs.pipe("/v/nightly/sales/x", b"")


def test_unknown_label_is_not_found_even_with_exports(sample):
    with pytest.raises(FileNotFoundError, match="a version number"):
        sample.ls("/v/nightly")


def test_modified_and_created(sample, lake):
    fs = sample
    time.sleep(0.002)
    fs.pipe("/sales/orders", b'{"kind": "table", "definition": {"table_format": "DELTA"}}')
    v = lake.latest_version()
    t = lambda n: datetime.fromtimestamp(lake.version_info(n).created_at_millis / 1000, UTC)  # noqa: E731
    assert fs.modified("/sales/orders") == t(v)
    assert fs.created("/sales/orders") == t(2)
    assert fs.modified("/v/2/sales/orders") == t(2)
    assert fs.modified("/v/3") == t(3)
    assert fs.created("/sales") == t(1)
