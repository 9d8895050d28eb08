"""A LakehouseDef whose export entry holds an unsafe location (another writer's, a
hostile one, or a caller's) was reported as "corrupt file ../../etc/passwd": the error
named the location inside the definition as the corrupt file, so fsck, the CLI and
every front end pointed the operator at a path outside the lakehouse instead of the
definition file, and a caller's own bad value to `set_lakehouse_def` was called a
corrupt file. Now a stored definition is named by its file with the export entry, and
a caller's definition is an InvalidArgumentError naming the entry. Only a definition
a rollback can repair says that a rollback repairs it."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError, InvalidArgumentError
from trinityfs.format.definitions import (
    PROP_VERSION_MAX_AGE_MILLIS,
    LakehouseDef,
    decode_lakehouse_def,
    new_lakehouse_def,
)

FILE = "_lakehouse_def_0123.binpb"
UNSAFE = "../../etc/passwd"


def test_a_stored_definition_is_named_by_its_file_with_the_export_entry() -> None:
    ldef = new_lakehouse_def()
    ldef.exported_snapshots["evil"] = UNSAFE
    with pytest.raises(CorruptFileError) as raised:
        decode_lakehouse_def(ldef.SerializeToString(), FILE)
    assert raised.value.path == FILE
    assert "export 'evil'" in str(raised.value)
    assert UNSAFE in str(raised.value)  # the value is still shown
    assert "--drop-refused-exports" in str(raised.value)  # a plain repair keeps exports


def test_a_repairable_definition_names_the_way_out() -> None:
    ldef = new_lakehouse_def()
    ldef.properties[PROP_VERSION_MAX_AGE_MILLIS] = "a week"
    with pytest.raises(CorruptFileError, match="a rollback to a version whose definition"):
        decode_lakehouse_def(ldef.SerializeToString(), FILE)


def test_a_callers_definition_is_invalid_input_not_a_corrupt_file(tmp_path) -> None:
    lake = Lakehouse.create(str(tmp_path), storage_options={"fsync": False})
    with pytest.raises(InvalidArgumentError, match="export 'evil'"), lake.transaction() as t:
        ldef = LakehouseDef()
        ldef.CopyFrom(t.lakehouse_def)
        ldef.exported_snapshots["evil"] = UNSAFE
        t.set_lakehouse_def(ldef)
    assert lake.latest_version() == 0


def test_fsck_names_the_definition_file_not_the_location(tmp_path) -> None:
    from test_latest_lakehouse_def_invalid_cannot_be_repaired import foreign_commit

    lake = Lakehouse.create(str(tmp_path), storage_options={"fsync": False})
    foreign_commit(lake, lambda d: d.exported_snapshots.__setitem__("evil", UNSAFE))
    report = Lakehouse.open(str(tmp_path)).fsck()
    problems = [(p.location, p.message) for p in report.errors]
    assert problems and all(loc.startswith("_lakehouse_def_") for loc, _ in problems), problems
    assert not any(f"corrupt file {UNSAFE}" in message for _, message in problems), problems
