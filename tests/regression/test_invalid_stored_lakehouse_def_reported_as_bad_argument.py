"""A LakehouseDef on storage that fails validation (another writer's, or one written by
the unvalidated `set_lakehouse_def` of d47b0f3) was reported as InvalidArgumentError: the
caller was told its own argument was wrong, the filesystem answered EINVAL
(InvalidRequest) for `ls` and `cat`, and the file at fault was not named. It is now
CorruptFileError naming the lakehouse definition file and the version, at every read
of a stored definition (txn/roots, exports, expiration, distributed transactions: one
`decode_lakehouse_def`); older versions stay readable."""

from __future__ import annotations

import errno

import fsspec
import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.trinitylake_pb2 import LakehouseDef


def _bad(ldef: LakehouseDef, field: str) -> None:
    if field == "isolation":
        ldef.txn_isolation_level = 7
    elif field == "node-size":
        ldef.node_file_max_size_bytes = 1
    else:
        ldef.properties["version.max-age-millis"] = "a week"


@pytest.fixture(params=["isolation", "node-size", "retention"])
def lake(request, tmp_path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t")
    with lake.transaction() as txn:
        ldef = LakehouseDef()
        ldef.CopyFrom(txn.lakehouse_def)
        _bad(ldef, request.param)
        txn.txn.set_lakehouse_def(ldef)  # below the catalog's check: as another writer
    return Lakehouse.open(lake.url)


def test_reads_and_writes_name_the_corrupt_file(lake):
    latest = lake.latest_version()
    for call in (
        lambda: lake.list_tables("ns"),
        lambda: lake.create_table("ns", "u"),
        lambda: lake.expire(dry_run=True),
    ):
        with pytest.raises(CorruptFileError) as info:
            call()
        assert "_lakehouse_def_" in str(info.value)
        assert "lakehouse definition" in str(info.value)
    assert lake.latest_version() == latest
    assert lake.at(latest - 1).list_tables("ns") == ["t"]  # the version before is fine


def test_the_filesystem_says_eio_not_einval(lake):
    fs = fsspec.filesystem("trinity", root=lake.url, skip_instance_cache=True)
    with pytest.raises(OSError) as info:
        fs.ls("/ns")
    assert info.value.errno == errno.EIO
    assert "_lakehouse_def_" in str(info.value)


def test_fsck_reports_it(lake):
    report = Lakehouse.open(lake.url).fsck()
    assert not report.ok
    assert any("lakehouse definition" in p.message for p in report.errors)
