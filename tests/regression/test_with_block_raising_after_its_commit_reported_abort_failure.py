"""`with lake.transaction() as t: ...; t.commit(); <raise>`: since abort after a landed
commit raises (bd2d844, so that no abort is acknowledged that did not happen), the block's
exit aborted on the exception and replaced it with TransactionClosedError. The block's
exit now leaves a transaction committed inside it alone: the commit stands and the
caller's exception propagates. An explicit abort after a landed commit still raises,
and a bulk load's too (it returned silently)."""

from __future__ import annotations

import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import TransactionClosedError


def test_the_callers_exception_propagates_and_the_commit_stands(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    with pytest.raises(KeyError, match="after"), lake.transaction() as txn:
        txn.create_namespace("ns")
        version = txn.commit()
        raise KeyError("after")
    assert lake.latest_version() == version
    assert lake.list_namespaces() == ["ns"]


def test_an_uncommitted_block_is_still_aborted(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    with pytest.raises(KeyError), lake.transaction() as txn:
        txn.create_namespace("ns")
        raise KeyError("before")
    assert lake.list_namespaces() == []


def test_explicit_abort_after_commit_raises(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    txn = lake.transaction()
    txn.create_namespace("ns")
    version = txn.commit()
    with pytest.raises(TransactionClosedError, match=f"version {version}"):
        txn.abort()


def test_bulk_load_abort_after_commit_raises(tmp_path):
    lake = Lakehouse.create(str(tmp_path))
    load = lake.bulk_load()
    load.create_namespace("ns")
    version = load.commit()
    with pytest.raises(TransactionClosedError, match=f"version {version}"):
        load.abort()
    assert lake.list_namespaces() == ["ns"]
    aborted = lake.bulk_load()
    aborted.abort()
    aborted.abort()  # aborting an aborted load changes nothing
