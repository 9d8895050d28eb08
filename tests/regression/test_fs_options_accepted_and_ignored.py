"""Regression: TrinityFileSystem accepted options and silently ignored them.

`TrinityFileSystem(**kwargs)` handed every keyword it did not name to fsspec's base
class, which keeps them without looking at them, and it did not use the catalog's one
configuration reader (`read_config`) that the CLI, the mount, PyIceberg and Spark use:
- `max_staleness_seconds=60` (the opt-in staleness bound the mount follows through
  $TRINITYFS_MAX_STALENESS) was ignored: every latest read still asked storage;
- `verify="tree"` was ignored (commits verified "reads");
- $TRINITYFS_MAX_STALENESS and $TRINITYFS_STORAGE_OPTIONS were ignored;
- `version=3` (also fsspec's `[trinity] version`, which fsspec passes as a keyword) and
  $TRINITYFS_VERSION were ignored: "/" stayed the latest version;
- a misspelt option (`rooot=...`, `storage_option=...`) was ignored.

Now root, storage options, staleness and verify go through `read_config` (arguments,
then the environment, then fsspec's config) and are honoured and pickled; a version pin
is refused naming the /v/<selector> path to read instead (the CLI refuses it the same
way); an unknown option is a TypeError naming it and the options there are.
"""

from __future__ import annotations

import pickle

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}


@pytest.fixture
def root(tmp_path) -> str:
    lake = Lakehouse.create(str(tmp_path / "lake"), storage_options=NO_FSYNC)
    lake.create_namespace("ns", {})
    lake.create_table("ns", "t", {})
    return lake.url.removeprefix("file://")


def _requests(fs: TrinityFileSystem) -> int:
    return fs.lake.storage.stats.snapshot()["requests"]


def _warm_cat_requests(fs: TrinityFileSystem) -> int:
    for _ in range(3):
        fs.cat("/ns/t")
    before = _requests(fs)
    fs.cat("/ns/t")
    return _requests(fs) - before


def test_max_staleness_seconds_is_honoured(root):
    plain = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    assert _warm_cat_requests(plain) >= 1  # the version probe
    fs = TrinityFileSystem(
        root=root, storage_options=NO_FSYNC, max_staleness_seconds=60, skip_instance_cache=True
    )
    assert fs.lake.freshness.max_staleness_seconds == 60
    assert _warm_cat_requests(fs) == 0
    again = pickle.loads(pickle.dumps(fs))
    assert again.lake.freshness.max_staleness_seconds == 60


def test_environment_staleness_and_storage_options(root, monkeypatch):
    monkeypatch.setenv("TRINITYFS_MAX_STALENESS", "30")
    monkeypatch.setenv("TRINITYFS_STORAGE_OPTIONS", '{"fsync": false}')
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    assert fs.lake.freshness.max_staleness_seconds == 30
    assert fs.lake.storage.storage_options == NO_FSYNC
    assert _warm_cat_requests(fs) == 0


def test_verify_is_honoured(root):
    fs = TrinityFileSystem(root=root, verify="tree", skip_instance_cache=True)
    assert fs.lake.verify == "tree"
    assert pickle.loads(pickle.dumps(fs)).lake.verify == "tree"


def test_bad_values_are_refused(root):
    with pytest.raises(ValueError, match="staleness"):
        TrinityFileSystem(root=root, max_staleness_seconds=-1, skip_instance_cache=True)
    with pytest.raises(ValueError, match="verify"):
        TrinityFileSystem(root=root, verify="sometimes", skip_instance_cache=True)


def test_a_version_pin_is_refused(root, monkeypatch):
    with pytest.raises(ValueError, match=r"/v/3/"):
        TrinityFileSystem(root=root, version=3, skip_instance_cache=True)
    monkeypatch.setenv("TRINITYFS_VERSION", "1")
    with pytest.raises(ValueError, match=r"TRINITYFS_VERSION.*/v/1/"):
        TrinityFileSystem(root=root, skip_instance_cache=True)


@pytest.mark.parametrize("option", ["rooot", "storage_option", "use_listings_cache"])
def test_an_unknown_option_is_refused(root, option):
    with pytest.raises(TypeError, match=option):
        TrinityFileSystem(root=root, skip_instance_cache=True, **{option: "x"})
