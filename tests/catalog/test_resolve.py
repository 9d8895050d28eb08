"""`Lakehouse.resolve`: the one precedence of version selectors, and `/v` listings."""

from __future__ import annotations

import time

import pytest

from trinityfs.catalog import Selection, export_selector, parse_selector
from trinityfs.errors import InvalidArgumentError, ReadOnlyError, VersionNotFoundError


@pytest.fixture
def lake3(lake):
    """Versions 0..3 and exports named like a version, a date, 'latest' and a plain name."""
    lake.create_namespace("a")  # 1
    lake.create_table("a", "t")  # 2
    lake.create_namespace("b")  # 3
    lake.export("3", version=1)
    lake.export("2000-01-01", version=2)
    lake.export("latest", version=1)
    lake.export("nightly", version=2)
    # trinityfs refuses ':' in export names it creates; another writer may not
    with lake.transaction() as t:
        ldef = type(t.lakehouse_def)()
        ldef.CopyFrom(t.lakehouse_def)
        ldef.exported_snapshots["export:odd"] = ldef.exported_snapshots["3"]
        t.set_lakehouse_def(ldef)
    return lake


def test_latest_is_the_only_writable_selection(lake3):
    latest = lake3.latest_version()
    sel = lake3.resolve("latest")
    assert sel == Selection("latest", "latest", latest, read_only=False)
    assert sel.is_latest


def test_digits_are_always_a_version_even_when_an_export_has_that_name(lake3):
    sel = lake3.resolve("3")
    assert (sel.how, sel.version, sel.read_only, sel.export) == ("version", 3, True, None)
    assert lake3.resolve("003").version == 3
    assert lake3.resolve(2).version == 2


def test_export_prefix_reaches_any_export_name(lake3):
    assert lake3.resolve("export:3") == Selection("export:3", "export", 1, True, export="3")
    assert lake3.resolve("export:latest").export == "latest"
    assert lake3.resolve("export:export:odd").export == "export:odd"
    assert lake3.resolve("export:2000-01-01").version == 2


def test_a_bare_export_name_wins_over_a_time(lake3):
    sel = lake3.resolve("2000-01-01")
    assert (sel.how, sel.export, sel.version) == ("export", "2000-01-01", 2)
    assert lake3.resolve("nightly").export == "nightly"


def test_time_prefix_always_means_a_time(lake3):
    with pytest.raises(VersionNotFoundError, match="no version at or before"):
        lake3.resolve("time:2000-01-01")  # long before the lakehouse existed
    sel = lake3.resolve("time:2999-01-01T00:00:00Z")
    assert (sel.how, sel.version, sel.read_only) == ("time", lake3.latest_version(), True)


def test_a_plain_iso_time_is_the_version_current_then(lake3):
    created = lake3.version_info(2).created_at_millis
    time.sleep(0.002)
    from datetime import UTC, datetime

    when = datetime.fromtimestamp((created + 0.5) / 1000, UTC).isoformat()
    sel = lake3.resolve(when)
    assert sel.how == "time" and sel.version == 2 and sel.millis is not None
    naive = datetime.fromtimestamp(created / 1000, UTC).replace(tzinfo=None).isoformat()
    assert lake3.resolve(naive).version == 2  # no offset: UTC


@pytest.mark.parametrize(
    "selector, error",
    [
        ("nonsense", VersionNotFoundError),
        ("99", VersionNotFoundError),
        ("export:missing", VersionNotFoundError),
        ("export:", InvalidArgumentError),
        ("time:yesterday", InvalidArgumentError),
        ("", InvalidArgumentError),
        (-1, InvalidArgumentError),
        (True, InvalidArgumentError),
        (1.5, InvalidArgumentError),
    ],
)
def test_bad_selectors_are_typed_errors(lake3, selector, error):
    with pytest.raises(error):
        lake3.resolve(selector)


def test_an_expired_version_is_not_found(lake3, monkeypatch):
    monkeypatch.setattr(lake3, "oldest_version", lambda: 2)
    with pytest.raises(VersionNotFoundError, match="expired"):
        lake3.resolve("1")


def test_view_opens_the_selection_read_only(lake3):
    snap = lake3.view("export:3")
    assert snap.selection.export == "3" and snap.list_namespaces() == ["a"]
    with pytest.raises(ReadOnlyError):
        snap.create_namespace("x")
    assert lake3.view("latest").list_namespaces() == ["a", "b"]
    assert lake3.view(lake3.resolve("2")).list_tables("a") == ["t"]


def test_listing_shows_each_selector_once_and_each_resolves_to_itself(lake3):
    entries = lake3.selectors()
    names = [e.selector for e in entries]
    assert len(names) == len(set(names)), names
    latest = lake3.latest_version()
    assert names[: latest + 2] == [*map(str, range(latest + 1)), "latest"]
    assert set(names[latest + 2 :]) == {
        "export:3",
        "2000-01-01",
        "export:latest",
        "nightly",
        "export:export:odd",
    }
    for entry in entries:
        sel = lake3.resolve(entry.selector)
        assert sel.how == entry.how
        assert sel.export == entry.export
        assert sel.version == entry.version


@pytest.mark.parametrize(
    "name, selector",
    [
        ("nightly", "nightly"),
        ("3", "export:3"),
        ("latest", "export:latest"),
        ("export:x", "export:export:x"),
        ("time:x", "export:time:x"),
        ("2000-01-01", "2000-01-01"),
    ],
)
def test_export_selector(name, selector):
    assert export_selector(name) == selector
    assert parse_selector(selector).how in ("export", "label")


def test_resolving_a_bare_label_reads_the_export_list_of_the_latest_version(lake3):
    lake3.drop_export("nightly")
    with pytest.raises(VersionNotFoundError):
        lake3.resolve("nightly")
