"""A bulk load whose spill directory could not be made (missing, a file, a bad path)
raised a bare FileNotFoundError/TypeError after it had taken its lease: the lease file
stayed on storage, nothing could abort it, and it held the base version back from
expiration until it lapsed. Now the spill comes first; InvalidArgumentError names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import InvalidArgumentError


def _txn_files(lake: Lakehouse) -> list[str]:
    """The transaction files (a bulk load's lease is one) under the lakehouse's root."""
    root = Path(lake.url.removeprefix("file://"))
    return [p.name for p in root.rglob("*txn-*")]


@pytest.mark.parametrize(
    "spill_dir",
    ["missing-dir", "a-file", "bad\x00name", 7],
    ids=["missing", "file", "nul", "int"],
)
def test_unusable_spill_dir_is_refused_before_any_lease(tmp_path, spill_dir):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    (tmp_path / "a-file").write_text("x")
    if isinstance(spill_dir, str) and "\x00" not in spill_dir:
        spill_dir = str(tmp_path / spill_dir)
    with pytest.raises(InvalidArgumentError, match="spill_dir"):
        lake.bulk_load(spill_dir=spill_dir)
    assert _txn_files(lake) == []
    assert lake.expire(dry_run=True).live_transactions == []


def test_a_failure_after_the_lease_drops_it(tmp_path, monkeypatch):
    """Whatever fails once the lease is taken (here: reading the base), the lease goes."""
    from trinityfs.catalog import bulk

    lake = Lakehouse.create(str(tmp_path / "lake"))

    def broken_reader(*args, **kwargs):
        raise RuntimeError("base unreadable")

    monkeypatch.setattr(bulk, "CatalogReader", broken_reader)
    with pytest.raises(RuntimeError, match="base unreadable"):
        lake.bulk_load(spill_dir=str(tmp_path))
    assert _txn_files(lake) == []
    assert list(tmp_path.glob("trinityfs-spill-*")) == []


def test_a_usable_spill_dir_still_loads(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.bulk_load(spill_dir=str(tmp_path)) as load:
        load.create_namespace("ns")
        load.create_table("ns", "t")
    assert lake.list_tables("ns") == ["t"]
    assert _txn_files(lake) == []
