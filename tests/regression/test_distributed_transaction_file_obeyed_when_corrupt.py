"""Regression: a distributed transaction's file (`txn-<id>.binpb`) carried no checksum.

Its name is fixed and it is rewritten by every save, so it cannot carry a content hash
in its name like node and definition files; protobuf decodes almost any bytes, so a bit
flip was obeyed: another expiry time (expiration then sweeps a live transaction's
files), another running root or base version (the commit applies other changes), or a
truncation that drops the last fields. Now the file ends with a checksum field that
readers following FORMAT.md skip as unknown; a damaged file is CorruptFileError naming
it, whatever byte is hit.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.format.definitions import encode_definition
from trinityfs.format.integrity import split_checksum_trailer
from trinityfs.format.trinitylake_pb2 import TransactionDef
from trinityfs.lifecycle import dtxn
from trinityfs.lifecycle.gc import scan_transactions
from trinityfs.lifecycle.inventory import Inventory

NO_FSYNC = {"fsync": False}


@pytest.fixture
def saved(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    txn = lake.begin_distributed(txn_id="t1")
    txn.create_table("ns", "pending", {"properties": {"k": "v"}})
    txn.save()
    location = txn.txn.location
    return lake, location, lake.storage.read(location)


def _load(lake: Lakehouse, data: bytes):
    location = dtxn.transaction_location("t1")
    lake.storage.write(location, data)
    return lake.load_distributed("t1")


def test_every_bit_flip_of_a_transaction_file_is_detected(saved) -> None:
    lake, location, data = saved
    engine = lake.engine
    for i in range(len(data) * 8):
        damaged = bytearray(data)
        damaged[i // 8] ^= 1 << (i % 8)
        with pytest.raises(CorruptFileError) as caught:
            dtxn.decode_transaction_def(bytes(damaged), location)
        assert location in str(caught.value)
    # end to end: loading names the file, never returns another transaction
    damaged = bytearray(data)
    damaged[len(data) // 3] ^= 0x10
    with pytest.raises(CorruptFileError, match="txn-t1"):
        _load(lake, bytes(damaged))
    assert engine is lake.engine


def test_every_truncation_is_detected_or_reads_the_same(saved) -> None:
    _lake, location, data = saved
    original = dtxn.decode_transaction_def(data, location)
    for n in range(len(data)):
        try:
            tdef = dtxn.decode_transaction_def(data[:n], location)
        except CorruptFileError:
            continue
        assert tdef == original, f"truncated to {n} bytes read as another transaction"


def test_expiration_does_not_obey_a_damaged_transaction_file(saved) -> None:
    lake, location, data = saved
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0x01
    lake.storage.write(location, bytes(damaged))
    [stored] = scan_transactions(lake.storage, Inventory.scan(lake.storage))
    assert stored.tdef is None and "txn-t1" in (stored.problem or "")
    assert stored.live(cutoff_millis=2**62), "an unreadable transaction is kept, not expired"


def test_file_without_checksum_from_older_writers_still_loads(saved) -> None:
    lake, location, data = saved
    body, verified = split_checksum_trailer(location, data)
    assert verified
    loaded = _load(lake, body)  # what trinityfs wrote before checksums (FORMAT.md only)
    assert loaded.list_tables("ns") == ["pending"]
    assert loaded.commit() == lake.latest_version()


def test_readers_following_format_md_read_the_file(saved) -> None:
    _lake, _location, data = saved
    tdef = TransactionDef.FromString(data)  # the checksum is an unknown field to them
    assert tdef.id == "t1"
    assert data.startswith(encode_definition(tdef))


def test_file_naming_another_transaction_is_refused(saved) -> None:
    lake, location, data = saved
    tdef = dtxn.decode_transaction_def(data, location)
    tdef.id = "t2"
    with pytest.raises(CorruptFileError, match="not the one its name gives"):
        _load(lake, dtxn.encode_transaction_def(tdef))
