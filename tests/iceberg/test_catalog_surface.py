"""TrinityCatalog over the catalog's one surface (issue 12): version selection through
`Lakehouse.resolve`, last-changed through `Lakehouse.last_changed`, configuration through
`read_config`, and catalog errors translated in one place (trinityfs/iceberg/errors.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)

from trinityfs import errors as tfs
from trinityfs.catalog import Lakehouse
from trinityfs.iceberg import TrinityCatalog
from trinityfs.iceberg.errors import Subject, iceberg_errors, translate


def _row(n: int) -> pa.Table:
    return pa.table({"n": pa.array([n], pa.int64())})


def test_table_version_asks_the_catalog_history_not_a_walk(catalog, monkeypatch):
    tbl = catalog.create_table("sales.t", schema=_row(0).schema)
    tbl.append(_row(1))
    changed = catalog.lakehouse.latest_version()
    for i in range(20):  # versions that do not touch the table
        catalog.create_namespace(f"other{i}")
    calls: list[int] = []
    real = Lakehouse.last_changed

    def last_changed(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    def no_walk(self, version):  # the old table_version called changes() per version
        raise AssertionError("table_version walked the versions one by one")

    monkeypatch.setattr(Lakehouse, "last_changed", last_changed)
    monkeypatch.setattr(Lakehouse, "changes", no_walk)
    assert catalog.table_version("sales.t") == changed
    assert catalog.at(changed - 1).table_version("sales.t") == changed - 1
    assert len(calls) == 2
    with pytest.raises(NoSuchTableError):
        catalog.table_version("sales.missing")
    with pytest.raises(NoSuchTableError):
        catalog.table_version("nowhere.t")


def test_version_property_takes_every_selector_of_the_catalog(catalog, open_catalog):
    tbl = catalog.create_table("sales.t", schema=_row(0).schema)
    tbl.append(_row(1))
    v1 = catalog.lakehouse.latest_version()
    catalog.lakehouse.export("2000-01-01", v1)  # an export named like a time
    catalog.lakehouse.export("7", v1)  # an export named like a version
    tbl.append(_row(2))

    by_export = open_catalog(version="2000-01-01")
    assert by_export.read_only and by_export.pin.how == "export"
    assert by_export.load_table("sales.t").scan().to_pandas()["n"].tolist() == [1]
    # digits are always a version (the one precedence), export:<name> reaches the export
    assert open_catalog(version="export:7").pin.export == "7"
    assert open_catalog(version=str(v1)).pin.how == "version"
    latest = open_catalog(version="latest")
    assert not latest.read_only and latest.pinned_version is None
    with pytest.raises(tfs.VersionNotFoundError):
        open_catalog(version="no-such-export")
    with pytest.raises(tfs.ReadOnlyError, match="2000-01-01"):
        by_export.create_namespace("x")


def test_root_storage_options_and_pin_come_from_the_one_config_reader(lake_root, monkeypatch):
    monkeypatch.setenv("TRINITYFS_ROOT", lake_root)
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", json.dumps({"fsync": False}))
    cat = TrinityCatalog("lake")  # no root property: the environment names it
    assert cat.lakehouse.url == Lakehouse.open(lake_root).url
    assert cat.storage_options == {"fsync": False}
    cat.create_namespace("sales")
    monkeypatch.setenv("TRINITYFS_VERSION", "0")
    assert TrinityCatalog("lake").pinned_version == 0
    # arguments win over the environment
    assert TrinityCatalog("lake", version="1").pinned_version == 1
    monkeypatch.delenv("TRINITYFS_ROOT")
    monkeypatch.delenv("TRINITYFS_VERSION")
    with pytest.raises(ValueError, match="root"):
        TrinityCatalog("lake")


@pytest.mark.parametrize(
    ("error", "subject", "expected", "text"),
    [
        (tfs.ObjectNotFoundError("x"), Subject("load", table="a.b"), NoSuchTableError, "a.b"),
        (
            tfs.NamespaceNotFoundError("x"),
            Subject("load", table="a.b", namespace="a", must_exist=True),
            NoSuchTableError,
            "a.b",
        ),
        (
            tfs.NamespaceNotFoundError("x"),
            Subject("create", table="a.b", namespace="a"),
            NoSuchNamespaceError,
            "a",
        ),
        (
            tfs.InvalidNameError("bad"),
            Subject("load", namespace="..", must_exist=True),
            NoSuchNamespaceError,
            "..",
        ),
        (
            tfs.AlreadyExistsError("x"),
            Subject("create", table="a.b"),
            TableAlreadyExistsError,
            "a.b",
        ),
        (
            tfs.AlreadyExistsError("x"),
            Subject("rename", table="a.b", target="a.c"),
            TableAlreadyExistsError,
            "a.c",
        ),
        (
            tfs.AlreadyExistsError("x"),
            Subject("mk", namespace="a"),
            NamespaceAlreadyExistsError,
            "a",
        ),
        (
            tfs.NamespaceNotEmptyError("x"),
            Subject("rm", namespace="a"),
            NamespaceNotEmptyError,
            "a",
        ),
        (
            tfs.ObjectNotFoundError("x"),
            Subject("load", table="a.v", kind="view"),
            NoSuchViewError,
            "View does not exist: a.v",
        ),
        (
            tfs.AlreadyExistsError("x"),
            Subject("rename", table="a.v", target="a.w", kind="view"),
            ViewAlreadyExistsError,
            "a.w",
        ),
        (
            tfs.CommitConflictError("K", 9, "conflict"),
            Subject("commit to table a.b"),
            CommitFailedException,
            "commit to table a.b lost a race with catalog version 9",
        ),
    ],
)
def test_catalog_errors_become_pyiceberg_exceptions_in_one_place(error, subject, expected, text):
    translated = translate(error, subject)
    assert isinstance(translated, expected) and text in str(translated)
    with (
        pytest.raises(expected),
        iceberg_errors(
            subject.what,
            table=subject.table,
            namespace=subject.namespace,
            target=subject.target,
            must_exist=subject.must_exist,
            kind=subject.kind,
        ),
    ):
        raise error


def test_other_errors_pass_unchanged():
    for error in (tfs.ReadOnlyError("ro"), tfs.InvalidNameError("bad"), ValueError("v")):
        with pytest.raises(type(error)), iceberg_errors("x", table="a.b"):
            raise error


def test_front_end_translates_errors_only_through_the_context():
    """No `except <catalog error>` left inline in the Iceberg front end (issue 12 item 4)."""
    import pathlib
    import re

    import trinityfs.iceberg as pkg

    inline = re.compile(
        r"except \(?[^:]*\b(ObjectNotFoundError|NamespaceNotFoundError|AlreadyExistsError|"
        r"CommitConflictError|NamespaceNotEmptyError)\b"
    )
    offenders = [
        f"{path.name}:{n}"
        for path in pathlib.Path(pkg.__file__).parent.glob("*.py")
        if path.name != "errors.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if inline.search(line)
    ]
    assert offenders == []
