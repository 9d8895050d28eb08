"""A commit that lands and then raises (Ctrl-C during its late check, or
TransactionExpiredError when the undo of a late landing fails: "run trinityfs fsck")
reached the front ends' `except BaseException: txn.abort(); raise` clean-up, and since
bd2d844 (abort after a landed commit raises) TransactionClosedError replaced the real
exception: PyIceberg callers got an unmapped error instead of KeyboardInterrupt or the
fsck advice. And a PyIceberg multi-table commit in that state deleted the metadata
files its landed version names (every load of the table failed). Now the clean-up is
`CatalogTransaction.discard()` (abort unless the commit landed), and the multi-table
clean-up skips a commit that landed. Found in the session's review."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from iceberg_helpers import make_lake

from trinityfs.errors import TransactionExpiredError
from trinityfs.iceberg import TrinityCatalog
from trinityfs.txn.transaction import Transaction

SCHEMA = pa.schema([("a", pa.int64())])


def _raise_after_landing(monkeypatch, exc: BaseException) -> None:
    def late(self, version, base):  # where the late check of a landed commit raises
        raise exc

    monkeypatch.setattr(Transaction, "_restore_if_swept", late)


@pytest.mark.parametrize(
    "exc",
    [KeyboardInterrupt(), TransactionExpiredError("version 1 stays unreadable: run fsck")],
    ids=["ctrl-c", "undo-failed"],
)
def test_the_original_exception_reaches_the_iceberg_caller(tmp_path, monkeypatch, exc):
    catalog = TrinityCatalog("c", root=str(tmp_path / "lake"), create="true")
    _raise_after_landing(monkeypatch, exc)
    with pytest.raises(type(exc)) as info:
        catalog.create_namespace("a")
    assert info.value is exc
    monkeypatch.undo()
    assert ("a",) in TrinityCatalog("d", root=str(tmp_path / "lake")).list_namespaces()


def test_a_multi_table_commit_that_landed_keeps_its_metadata_files(tmp_path, monkeypatch):
    root = make_lake(Path(tmp_path) / "lake")
    catalog = TrinityCatalog("c", root=root)
    catalog.create_table("ns.t", SCHEMA)
    mt = catalog.multi_table_transaction()
    mt.load_table("ns.t").append(pa.table({"a": [1]}, schema=SCHEMA))
    _raise_after_landing(monkeypatch, TransactionExpiredError("stays unreadable: run fsck"))
    with pytest.raises(Exception, match="fsck"):
        mt.commit()
    monkeypatch.undo()
    table = TrinityCatalog("check", root=root).load_table("ns.t")
    assert table.scan().to_arrow()["a"].to_pylist() == [1]
