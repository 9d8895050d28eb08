"""Regression: a lakehouse removed (and made again at the same path) under a process
that had it open.

Found 2026-11-24. The local backend reopened a removed root directory, or made it again
on the next write, and went on silently; the layers above still remembered the removed
lakehouse (its latest version, tree and definitions). So a warm writer:

- committed into a *new* lakehouse made at the same path: its version 7 landed next to
  the new lakehouse's versions 0-1, with a lakehouse definition file that does not exist
  there, and from then on no reader could open the new lakehouse at all;
- made a removed lakehouse's directory again and acknowledged a commit there (root 3
  with no versions 0-2 and no definition files of the objects it lists);
- kept answering reads from memory about a lakehouse that no longer existed.

Now the root directory's descriptor check (one fstat, already made before every
operation) reports a root that was opened and is gone, or is another directory, as
LakehouseNotFoundError, and the root is never made again once opened. Each test below
fails on the code before (the commit succeeds, or the read answers).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from trinityfs.catalog import Lakehouse
from trinityfs.errors import LakehouseNotFoundError
from trinityfs.fs.spec import TrinityFileSystem

LOCAL = {"fsync": False}


def _warm_writer(url: Path, tables: int = 5) -> Lakehouse:
    lake = Lakehouse.create(str(url), storage_options=LOCAL)
    lake.create_namespace("ns")
    for i in range(tables):
        lake.create_table("ns", f"t{i}")
    lake.describe_table("ns", "t0")
    return lake


def _roots(url: Path) -> list[str]:
    return sorted(n for n in os.listdir(url) if n.endswith(".arrow") and n.startswith("_"))


def test_a_warm_writer_never_commits_into_a_lakehouse_made_again_at_its_path(tmp_path):
    url = tmp_path / "lake"
    old = _warm_writer(url)
    shutil.rmtree(url)
    new = Lakehouse.create(str(url), storage_options=LOCAL)
    new.create_namespace("other")
    roots = _roots(url)

    with pytest.raises(LakehouseNotFoundError, match="replaced by another directory"):
        old.create_table("ns", "x")
    with pytest.raises(LakehouseNotFoundError):
        old.create_namespace("other2")

    assert _roots(url) == roots
    reader = Lakehouse.open(str(url), storage_options=LOCAL)
    assert reader.list_namespaces() == ["other"]
    assert reader.latest_version() == 1
    reader.check()


def test_a_warm_writer_never_makes_a_removed_lakehouse_again(tmp_path):
    url = tmp_path / "lake"
    old = _warm_writer(url)
    shutil.rmtree(url)
    with pytest.raises(LakehouseNotFoundError, match="was removed while open"):
        old.create_table("ns", "x")
    assert not url.exists()


def test_a_warm_reader_does_not_answer_from_memory_about_a_replaced_lakehouse(tmp_path):
    url = tmp_path / "lake"
    old = _warm_writer(url)
    shutil.rmtree(url)
    Lakehouse.create(str(url), storage_options=LOCAL).create_namespace("ns")
    for read in (
        lambda: old.describe_table("ns", "t0"),
        lambda: old.list_tables("ns"),
        lambda: old.latest_version(),
    ):
        with pytest.raises(LakehouseNotFoundError):
            read()


def test_an_open_transaction_does_not_commit_into_the_new_lakehouse(tmp_path):
    url = tmp_path / "lake"
    old = _warm_writer(url)
    txn = old.transaction()
    txn.create_table("ns", "in-flight")
    shutil.rmtree(url)
    Lakehouse.create(str(url), storage_options=LOCAL).create_namespace("ns")
    roots = _roots(url)
    with pytest.raises(LakehouseNotFoundError):
        txn.commit()
    assert _roots(url) == roots


def test_trinity_urls_see_the_error_and_a_new_filesystem_sees_the_new_lakehouse(tmp_path):
    url = tmp_path / "lake"
    _warm_writer(url)
    fs = TrinityFileSystem(str(url), skip_instance_cache=True, storage_options=LOCAL)
    content = fs.cat("ns/t0")
    assert json.loads(content)
    shutil.rmtree(url)
    Lakehouse.create(str(url), storage_options=LOCAL).create_namespace("ns")
    roots = _roots(url)
    with pytest.raises(FileNotFoundError, match="replaced by another directory"):
        fs.cat("ns/t0")
    with pytest.raises(FileNotFoundError):
        fs.pipe_file("ns/t9", content)
    assert _roots(url) == roots
    again = TrinityFileSystem(str(url), skip_instance_cache=True, storage_options=LOCAL)
    assert again.ls("ns", detail=False) == []
