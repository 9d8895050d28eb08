"""Instances pickle (workers receive them) and are found through fsspec's mechanisms."""

from __future__ import annotations

import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor

import fsspec
import pytest
from fs_helpers import NO_FSYNC

from trinityfs.fs import TrinityFileSystem


def _worker_cat(fs, path):
    return fs.cat(path), os.getpid()


def test_pickle_roundtrip(sample):
    fs = sample
    fs.ls("/sales")  # fill caches; they must not travel
    data = pickle.dumps(fs)
    assert len(data) < 2000
    clone = pickle.loads(data)
    assert clone.root == fs.root and clone.lake_storage_options == NO_FSYNC
    assert clone.cat("/sales/orders") == fs.cat("/sales/orders")
    clone.pipe("/staging/from_clone", b"")
    assert fs.exists("/staging/from_clone")


def test_pickle_inside_a_transaction_is_a_plain_instance(sample):
    with sample.transaction:
        sample.pipe("/staging/a", b"")
        clone = pickle.loads(pickle.dumps(sample))
        assert not clone._intrans


def test_workers_in_other_processes(sample):
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        results = list(pool.map(_worker_cat, [sample] * 2, ["/sales/orders", "/v/2/sales/orders"]))
    assert results[0][0] == sample.cat("/sales/orders")
    assert results[0][1] != os.getpid()


def test_relative_root_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fs = TrinityFileSystem(root="lake", skip_instance_cache=True)
    assert fs.root == str(tmp_path / "lake")
    assert pickle.loads(pickle.dumps(fs)).root == str(tmp_path / "lake")


def test_fsspec_registry_and_urls(sample):
    fs = fsspec.filesystem("trinity", root=sample.root, storage_options=NO_FSYNC)
    assert isinstance(fs, TrinityFileSystem)
    with fsspec.open("trinity://sales/orders", "rb", root=sample.root) as f:
        assert f.read() == sample.cat("/sales/orders")
    of = fsspec.open("trinity://staging/new", "wb", root=sample.root)
    with of as f:
        f.write(b"")
    assert sample.exists("/staging/new")
    assert fs.unstrip_protocol("/sales/orders") == "trinity:///sales/orders"


def test_fsspec_config_and_environment(sample, monkeypatch, tmp_path):
    from fsspec.config import conf, set_conf_env

    monkeypatch.setitem(conf, "trinity", {"root": sample.root})
    fs = fsspec.filesystem("trinity", skip_instance_cache=True)
    assert fs.root == sample.root and fs.exists("/sales/orders")
    monkeypatch.delitem(conf, "trinity")
    # FSSPEC_TRINITY_ROOT, read into fsspec's config (fsspec reads it at import time)
    monkeypatch.setenv("FSSPEC_TRINITY_ROOT", sample.root)
    fake_conf: dict = {}
    set_conf_env(fake_conf)
    assert fake_conf["trinity"] == {"root": sample.root}
    monkeypatch.setitem(conf, "trinity", fake_conf["trinity"])
    assert fsspec.filesystem("trinity", skip_instance_cache=True).root == sample.root
    monkeypatch.delitem(conf, "trinity")
    # TRINITYFS_ROOT (shared with the command), then ./lakehouse
    monkeypatch.setenv("TRINITYFS_ROOT", sample.root)
    assert fsspec.filesystem("trinity", skip_instance_cache=True).root == sample.root
    monkeypatch.delenv("TRINITYFS_ROOT")
    monkeypatch.chdir(tmp_path)
    assert TrinityFileSystem(skip_instance_cache=True).root == str(tmp_path / "lakehouse")


def test_create_option(tmp_path):
    fs = TrinityFileSystem(root=str(tmp_path / "new"), create=True, skip_instance_cache=True)
    fs.mkdir("/ns")
    assert fs.lake.latest_version() == 1
    with pytest.raises(FileNotFoundError):
        TrinityFileSystem(root=str(tmp_path / "other"), skip_instance_cache=True).ls("/")
