"""Regression: inside `with fs.transaction:`, a `put` or `pipe` of several files that
failed part-way (one file not a definition) raised, yet the files before the failing
one stayed in the transaction and were committed when the block ended, if the caller
caught the error: half of a call that reported failure landed. Outside a transaction
the same call commits nothing. Now such a call dooms the transaction: leaving the block
raises (InvalidRequest, EINVAL) naming the failure, and nothing is committed. A failed
call that applied nothing (a single bad file, a missing path) leaves the transaction
usable as before. Found 2026-11-24 (helper adversary2); 2 of 4 fail on 19421b2.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

TABLE = b'{"kind": "table", "definition": {"table_format": "ICEBERG"}}'


@pytest.fixture
def fs(tmp_path) -> TrinityFileSystem:
    root = str(tmp_path / "lake")
    lake = Lakehouse.create(root, storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "keep", {})
    return TrinityFileSystem(root=root, skip_instance_cache=True)


def _sources(tmp_path) -> list[str]:
    paths = []
    for name, data in (("x", TABLE), ("y", b"garbage"), ("z", TABLE)):
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def _state(fs: TrinityFileSystem) -> tuple[int, list[str]]:
    lake = Lakehouse.open(fs.root)
    return lake.latest_version(), lake.list_tables("ns")


def test_put_failing_part_way_in_a_transaction_commits_nothing(fs, tmp_path) -> None:
    before = _state(fs)
    with pytest.raises(ValueError, match="nothing was committed") as err, fs.transaction:
        fs.pipe_file("/ns/other", TABLE)
        with pytest.raises(ValueError, match="not valid JSON"):
            fs.put(_sources(tmp_path), "/ns/")
    assert "/ns/y" in str(err.value)
    assert _state(fs) == before


def test_pipe_of_several_failing_part_way_commits_nothing(fs) -> None:
    before = _state(fs)
    with pytest.raises(ValueError, match="nothing was committed"), fs.transaction:
        try:
            fs.pipe({"/ns/p1": TABLE, "/ns/p2": b"garbage"})
        except ValueError as exc:
            assert "/ns/p2" in str(exc)
        else:
            pytest.fail("the pipe did not fail")
    assert _state(fs) == before


def test_a_failed_call_that_applied_nothing_leaves_the_transaction_usable(fs) -> None:
    version, _ = _state(fs)
    with fs.transaction:
        with pytest.raises(ValueError):
            fs.pipe_file("/ns/bad", b"garbage")
        with pytest.raises(FileNotFoundError):
            fs.rm("/ns/missing")
        with pytest.raises(ValueError):
            fs.pipe({"/ns/p2": b"garbage", "/ns/p3": TABLE})  # the first one failed
        fs.pipe_file("/ns/good", TABLE)
    assert _state(fs) == (version + 1, ["good", "keep"])


def test_put_failing_part_way_outside_a_transaction_commits_nothing(fs, tmp_path) -> None:
    before = _state(fs)
    with pytest.raises(ValueError):
        fs.put(_sources(tmp_path), "/ns/")
    assert _state(fs) == before
