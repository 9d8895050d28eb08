"""`CatalogTransaction.set_lakehouse_def` committed any LakehouseDef whose fixed fields
matched: a node size below the key table estimate, an unknown isolation level, an unsafe
export location or a malformed retention property was acknowledged as a new version, and
from then on every commit, the repair and `rollback` included, failed on it (the
lakehouse was unwritable through the API). It now makes the checks a new lakehouse's
definition gets, before anything is written."""

from __future__ import annotations

import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import InvalidArgumentError
from trinityfs.format.definitions import PROP_VERSION_MAX_AGE_MILLIS
from trinityfs.format.trinitylake_pb2 import LakehouseDef


def _node_size(ldef: LakehouseDef) -> None:
    ldef.node_file_max_size_bytes = 1


def _isolation(ldef: LakehouseDef) -> None:
    ldef.txn_isolation_level = 7


def _export(ldef: LakehouseDef) -> None:
    ldef.exported_snapshots["evil"] = "../../etc/passwd"


def _retention(ldef: LakehouseDef) -> None:
    ldef.properties[PROP_VERSION_MAX_AGE_MILLIS] = "a week"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (_node_size, InvalidArgumentError),
        (_isolation, InvalidArgumentError),
        (_export, InvalidArgumentError),
        (_retention, InvalidArgumentError),
    ],
    ids=["node-size", "isolation", "export", "retention"],
)
def test_an_unusable_definition_is_refused_and_nothing_commits(tmp_path, change, error):
    lake = Lakehouse.create(str(tmp_path))
    lake.create_namespace("ns")
    before = lake.latest_version()
    with pytest.raises(error), lake.transaction() as txn:
        ldef = LakehouseDef()
        ldef.CopyFrom(txn.lakehouse_def)
        change(ldef)
        txn.set_lakehouse_def(ldef)
    assert lake.latest_version() == before
    lake.create_table("ns", "t")  # still writable
    assert lake.rollback(before) == before + 2


def test_not_a_lakehouse_def_is_a_typed_error(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="LakehouseDef"), lake.transaction() as txn:
        txn.set_lakehouse_def({"properties": {}})


def test_a_valid_update_still_commits(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    with lake.transaction() as txn:
        ldef = LakehouseDef()
        ldef.CopyFrom(txn.lakehouse_def)
        ldef.properties[PROP_VERSION_MAX_AGE_MILLIS] = "86400000"
        txn.set_lakehouse_def(ldef)
    assert lake.lakehouse_def().properties[PROP_VERSION_MAX_AGE_MILLIS] == "86400000"
