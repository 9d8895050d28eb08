"""`with fs.transaction:`: everything inside is one commit; an exception discards all."""

from __future__ import annotations

import errno

import pytest
from fs_helpers import make_fs

from trinityfs.fs import CommitConflict

TABLE = b'{"kind": "table", "definition": {"table_format": "ICEBERG"}}'
DELTA = b'{"kind": "table", "definition": {"table_format": "DELTA"}}'


def test_everything_inside_is_one_commit(sample, lake):
    fs = sample
    with fs.transaction as tx:
        fs.mkdir("/new", properties={"a": "1"})
        fs.pipe("/new/t", TABLE)
        with fs.open("/new/u", "wb") as f:
            f.write(b"")
        fs.mv("/sales/orders", "/new/orders")
        fs.cp("/sales/big_orders", "/new/big")
        fs.rm("/sales/big_orders")
        fs.rmdir("/staging")
        fs.touch("/new/touched")
        fs.set_properties("/sales", {"b": "2"})
        # reads of the latest version inside see the transaction's own changes
        assert fs.ls("/new", detail=False) == [
            "/new/big",
            "/new/orders",
            "/new/t",
            "/new/touched",
            "/new/u",
        ]
        assert fs.cat("/new/t") == fs.cat("/v/latest/new/t")
        assert not fs.exists("/staging")
        # nothing is visible outside yet
        assert lake.latest_version() == 4
        assert make_fs(fs.root).ls("/", detail=False) == ["/sales", "/staging"]
    assert tx.version == 5 and lake.latest_version() == 5
    assert fs.ls("/", detail=False) == ["/new", "/sales"]
    assert fs.ls("/sales") == []
    assert fs.properties("/sales") == {"owner": "analytics", "b": "2"}


def test_an_exception_discards_everything(sample, lake):
    fs = sample
    with pytest.raises(RuntimeError), fs.transaction:
        fs.mkdir("/new")
        fs.pipe("/new/t", TABLE)
        fs.rm("/sales", recursive=True)
        raise RuntimeError("boom")
    assert lake.latest_version() == 4
    assert fs.ls("/", detail=False) == ["/sales", "/staging"]
    assert not fs._intrans


def test_a_bad_write_inside_discards_everything(sample, lake):
    fs = sample
    with pytest.raises(ValueError), fs.transaction:
        fs.pipe("/staging/a", TABLE)
        fs.pipe("/staging/b", b"not json")
    assert lake.latest_version() == 4
    assert fs.ls("/staging") == []


def test_conflict_names_the_key_and_commits_nothing(sample, root, lake):
    fs, other = sample, make_fs(root)
    with pytest.raises(CommitConflict) as info, fs.transaction:
        fs.pipe("/sales/orders", TABLE)
        fs.pipe("/staging/mine", TABLE)
        other.pipe("/sales/orders", DELTA)  # a concurrent writer wins version 5
    err = info.value
    assert isinstance(err, OSError) and err.errno == errno.EBUSY
    assert err.object == "table sales.orders" and err.path == "/sales/orders"
    assert err.version == 5
    assert "table sales.orders" in str(err) and "/sales/orders" in str(err)
    assert lake.latest_version() == 5
    assert not fs.exists("/staging/mine")
    assert b"DELTA" in fs.cat("/sales/orders")


def test_no_conflict_replays(sample, root, lake):
    fs, other = sample, make_fs(root)
    with fs.transaction as tx:
        fs.pipe("/staging/a", TABLE)
        other.pipe("/sales/b", TABLE)  # another key: no conflict
    assert tx.version == 6
    assert fs.exists("/staging/a") and fs.exists("/sales/b")


def test_empty_transaction_commits_nothing(sample, lake):
    with sample.transaction as tx:
        sample.pipe("/sales/orders", sample.cat("/sales/orders"))  # unchanged
    assert tx.version is None and lake.latest_version() == 4


def test_nested_blocks(sample, lake):
    fs = sample
    with fs.transaction:
        fs.pipe("/staging/a", TABLE)
        with fs.transaction:
            fs.pipe("/staging/b", TABLE)
        assert lake.latest_version() == 4  # the inner block does not commit
    assert lake.latest_version() == 5
    assert fs.ls("/staging", detail=False) == ["/staging/a", "/staging/b"]
    with pytest.raises(ValueError, match="nested"), fs.transaction:
        fs.pipe("/staging/c", TABLE)
        try:
            with fs.transaction:
                raise KeyError("inner")
        except KeyError:
            pass
    assert lake.latest_version() == 5 and not fs.exists("/staging/c")


def test_start_and_end_transaction(sample, lake):
    fs = sample
    fs.start_transaction()
    fs.pipe("/staging/a", TABLE)
    f = fs.open("/staging/b", "wb")  # left open: written when the transaction ends
    f.write(TABLE)
    assert lake.latest_version() == 4
    fs.end_transaction()
    assert lake.latest_version() == 5
    assert fs.ls("/staging", detail=False) == ["/staging/a", "/staging/b"]


def test_other_threads_batches_are_separate(sample, lake):
    import threading

    fs = sample
    errors = []

    def write(i):
        try:
            fs.pipe(f"/staging/t{i}", TABLE)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(fs.ls("/staging")) == 8
    assert lake.latest_version() == 12


def test_within_a_catalog_transaction_of_your_own(sample, lake):
    fs = sample
    with lake.transaction() as txn:
        with fs.within(txn):
            fs.pipe("/staging/a", TABLE)
            fs.mv("/sales/orders", "/staging/orders")
            assert fs.ls("/staging", detail=False) == ["/staging/a", "/staging/orders"]
        assert lake.latest_version() == 4  # the owner commits
    assert lake.latest_version() == 5
    assert fs.ls("/staging", detail=False) == ["/staging/a", "/staging/orders"]
    with pytest.raises(ValueError), fs.transaction, fs.within(txn):
        pass
