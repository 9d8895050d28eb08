"""A lakehouse whose latest LakehouseDef fails validation (committed by another writer:
a name limit above ours, a malformed property, a node size below the key table) could
not be repaired through trinityfs: every commit, rollback and set_lakehouse_def read
the latest definition first and raised CorruptFileError, although older versions stayed
readable. Now `Lakehouse.rollback(v)` (`trinityfs rollback v`) to a version whose
definition passes commits v's tree with a repaired definition: v's fixed fields, the
latest definition's exports (none re-added, none dropped), and every other field the
latest one's unless refused. When no repair is possible it is LakehouseDefInvalidError
naming the problem, nothing committed (trinityfs/lifecycle/defrepair.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from regression_cli import run

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, UnsupportedFormatVersionError
from trinityfs.format.definitions import LakehouseDef, decode_definition, encode_definition
from trinityfs.format.keys import KEY_LAKEHOUSE_DEF
from trinityfs.format.paths import new_lakehouse_def_location
from trinityfs.txn.publish import build_root, create_root
from trinityfs.txn.snapshot import Snapshot


def foreign_commit(lake: Lakehouse, change: Callable[[LakehouseDef], None]) -> int:
    """Commit the latest tree with a definition changed by `change`, unchecked, the way
    another writer could; -> its version."""
    engine = lake.engine
    number = engine.roots.latest_version()
    top = engine.roots.load(number)
    before = top.system[KEY_LAKEHOUSE_DEF]
    ldef = decode_definition(engine.storage.read_immutable(before), LakehouseDef, before)
    latest = Snapshot(number, top, ldef, before, engine.nodes(ldef.order))
    ldef = LakehouseDef()
    ldef.CopyFrom(latest.lakehouse_def)
    change(ldef)
    data = encode_definition(ldef)
    location = new_lakehouse_def_location(data)
    engine.storage.write_immutable(location, data)
    version = latest.version + 1
    node_bytes, root = build_root(
        engine,
        version,
        latest.root,
        {},
        order=latest.lakehouse_def.order,
        budget=engine.budget(latest.lakehouse_def),
        lakehouse_def=location,
        previous=latest,
    )
    assert create_root(engine, version, node_bytes, root)
    return version


def history(root: str) -> tuple[Lakehouse, int]:
    """Exports old (kept), gone (dropped after the target) and new (recorded after the
    target); -> (lakehouse, the target version)."""
    lake = Lakehouse.create(root)
    lake.create_namespace("ns")
    lake.create_table("ns", "t1")
    lake.export("old")
    lake.export("gone")
    target = lake.create_table("ns", "t2")
    lake.export("new")
    lake.drop_export("gone")
    lake.create_table("ns", "t3")
    return lake, target


def _property(ldef: LakehouseDef) -> None:
    ldef.properties["version.max-age-millis"] = "abc"


def _name_limit(ldef: LakehouseDef) -> None:
    ldef.namespace_name_max_size_bytes = 20000


def _node_size(ldef: LakehouseDef) -> None:
    ldef.node_file_max_size_bytes = 10


BROKEN = {  # how the definition is broken, the field taken back from the target's
    "property": (_property, lambda d: d.properties.get("version.max-age-millis")),
    "name_limit": (_name_limit, lambda d: d.namespace_name_max_size_bytes),
    "node_size": (_node_size, lambda d: d.node_file_max_size_bytes),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_rollback_repairs_and_keeps_the_exports(tmp_path, broken) -> None:
    root = str(tmp_path / "lake")
    lake, target = history(root)
    change, field = BROKEN[broken]
    before = field(lake.lakehouse_def())

    def bad(ldef: LakehouseDef) -> None:
        change(ldef)
        ldef.properties["mine"] = "kept"  # a valid change made with the invalid one
        ldef.txn_ttl_millis = 123456

    bad_version = foreign_commit(lake, bad)
    lake = Lakehouse.open(root)
    with pytest.raises(CorruptFileError):
        lake.create_table("ns", "t4")
    assert lake.at(version=bad_version - 1).list_tables("ns")  # older versions readable

    landed = lake.rollback(target)
    assert landed == bad_version + 1
    lake = Lakehouse.open(root)
    ldef = lake.lakehouse_def()
    assert field(ldef) == before
    assert ldef.properties["mine"] == "kept" and ldef.txn_ttl_millis == 123456
    assert sorted(e.name for e in lake.exports()) == ["new", "old"]
    assert list(lake.at().list_tables("ns")) == ["t1", "t2"]
    assert lake.create_table("ns", "t4") == landed + 1
    assert lake.at(export="new").list_tables("ns")
    report = lake.fsck()
    assert [p.version for p in report.errors] == [bad_version], report.errors


def test_cli_rollback_repairs(tmp_path) -> None:
    root = str(tmp_path / "lake")
    lake, target = history(root)
    bad_version = foreign_commit(lake, _property)
    result = run(root, "rollback", str(target), "--if-latest", str(bad_version - 1))
    assert result.status == 1 and "not " + str(bad_version - 1) in result.err, result.err
    assert Lakehouse.open(root).latest_version() == bad_version
    result = run(root, "rollback", str(target))
    assert result.status == 0, result.err
    assert f"version {bad_version + 1}" in result.out
    assert sorted(e.name for e in Lakehouse.open(root).exports()) == ["new", "old"]


def test_refused_when_the_exports_are_what_is_invalid(tmp_path) -> None:
    from trinityfs.errors import LakehouseDefInvalidError

    root = str(tmp_path / "lake")
    lake, target = history(root)

    def unsafe(ldef: LakehouseDef) -> None:
        ldef.exported_snapshots["elsewhere"] = "../outside.arrow"

    bad_version = foreign_commit(lake, unsafe)
    lake = Lakehouse.open(root)
    with pytest.raises(LakehouseDefInvalidError, match="would drop that record"):
        lake.rollback(target)
    assert lake.latest_version(fresh=True) == bad_version
    result = run(root, "rollback", str(target))
    assert result.status == 1 and result.err.count("\n") == 1, result.err
    assert "its exports are what it refuses" in result.err
    assert "--drop-refused-exports" in result.err  # the way out is named


def test_refused_export_records_are_dropped_when_asked(tmp_path, caplog) -> None:
    """The way out of a definition whose only problem is an export record no reader can
    use: `--drop-refused-exports` drops that record (named in the warning) and keeps
    every other export, as recorded in the latest definition."""
    root = str(tmp_path / "lake")
    lake, target = history(root)

    def unsafe(ldef: LakehouseDef) -> None:
        ldef.exported_snapshots["elsewhere"] = "../outside.arrow"

    bad_version = foreign_commit(lake, unsafe)
    dry = run(root, "--json", "rollback", "--dry-run", "--drop-refused-exports", str(target))
    assert dry.status == 0, dry.err
    assert "elsewhere" in dry.out and "--drop-refused-exports" in dry.out
    assert Lakehouse.open(root).latest_version(fresh=True) == bad_version  # nothing written
    result = run(root, "rollback", "--drop-refused-exports", str(target))
    assert result.status == 0, result.err
    assert "'elsewhere' (dropped:" in result.err
    fresh = Lakehouse.open(root)
    assert fresh.latest_version() == bad_version + 1
    assert sorted(e.name for e in fresh.exports()) == ["new", "old"]
    assert fresh.fsck().errors == [] or all(
        p.version == bad_version or bad_version in p.versions for p in fresh.fsck().errors
    )
    fresh.create_namespace("writable_again")


def test_refused_when_the_target_is_invalid_too(tmp_path) -> None:
    from trinityfs.errors import LakehouseDefInvalidError

    root = str(tmp_path / "lake")
    lake, _target = history(root)
    first_bad = foreign_commit(lake, _property)
    foreign_commit(Lakehouse.open(root), _node_size)
    lake = Lakehouse.open(root)
    with pytest.raises(LakehouseDefInvalidError) as caught:
        lake.rollback(first_bad)
    assert f"the newest version whose definition passes is {first_bad - 1}" in str(caught.value)
    assert lake.latest_version(fresh=True) == first_bad + 1
    assert lake.rollback(first_bad - 1) == first_bad + 2


def test_a_newer_major_version_is_not_downgraded(tmp_path) -> None:
    """Guard: a definition of a newer format is not "invalid"; nothing is committed."""
    root = str(tmp_path / "lake")
    lake, target = history(root)

    def newer(ldef: LakehouseDef) -> None:
        ldef.major_version = 1

    bad_version = foreign_commit(lake, newer)
    lake = Lakehouse.open(root)
    with pytest.raises(UnsupportedFormatVersionError):
        lake.rollback(target)
    assert lake.latest_version(fresh=True) == bad_version


def test_log_lists_the_readable_versions_and_names_the_other(tmp_path) -> None:
    """`trinityfs log` failed as a whole on the one version it could not read; now that
    version's row says why and the command exits 1 with one line."""
    root = str(tmp_path / "lake")
    lake, target = history(root)
    bad_version = foreign_commit(lake, _property)
    assert run(root, "rollback", str(target)).status == 0
    result = run(root, "log")
    assert result.status == 1 and result.err.count("\n") == 1, result.err
    assert f"(reading version {bad_version})" in result.err
    rows = [line.split()[0] for line in result.out.splitlines()[1:]]
    assert rows == [str(v) for v in range(bad_version + 1, -1, -1)], result.out
    assert "(unreadable: corrupt file" in result.out


def test_two_repairs_at_once(tmp_path, monkeypatch) -> None:
    """Another process repaired the definition between this rollback's first attempt and
    its repair: that is no error (it was: the first attempt's CorruptFileError was
    raised again), the plain rollback runs once more and finds nothing to change."""
    import trinityfs.catalog.lakehouse as lakehouse_module

    root = str(tmp_path / "lake")
    lake, target = history(root)
    bad_version = foreign_commit(lake, _property)
    first, second = Lakehouse.open(root), Lakehouse.open(root)
    real = lakehouse_module._defrepair.rollback_over_invalid_definition
    raced: list[int] = []

    def other_process_first(engine, version, **kwargs):
        if not raced:
            raced.append(-1)  # the other one's own repair goes straight through
            raced[0] = first.rollback(version)
        return real(engine, version, **kwargs)

    monkeypatch.setattr(
        lakehouse_module._defrepair, "rollback_over_invalid_definition", other_process_first
    )
    assert second.rollback(target) == bad_version + 1 == raced[0]
    assert sorted(e.name for e in Lakehouse.open(root).exports()) == ["new", "old"]


def test_a_missing_latest_definition_is_named(tmp_path) -> None:
    """The latest definition's file is gone: its exports are unknown, so no repair; the
    error says that (it was a bare "file not found: _lakehouse_def_...")."""
    from trinityfs.errors import LakehouseDefInvalidError

    root = str(tmp_path / "lake")
    lake, target = history(root)
    bad_version = foreign_commit(lake, _property)
    location = lake.engine.roots.load(bad_version).system[KEY_LAKEHOUSE_DEF]
    (tmp_path / "lake" / location).unlink()
    lake = Lakehouse.open(root)
    with pytest.raises(LakehouseDefInvalidError, match="exports it records are unknown"):
        lake.rollback(target)
    assert lake.latest_version(fresh=True) == bad_version
