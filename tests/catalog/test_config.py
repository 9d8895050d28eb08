"""`read_config`: arguments, then environment, then fsspec config, then defaults."""

from __future__ import annotations

import os

import pytest

from trinityfs.catalog import read_config
from trinityfs.errors import InvalidArgumentError

ENV = {
    "TRINITYFS_ROOT": "s3://env/lake",
    "TRINITYFS_STORAGE_OPTIONS": '{"key": "env-key", "anon": false}',
    "TRINITYFS_VERSION": "7",
    "TRINITYFS_MAX_STALENESS": "2.5",
}
CONF = {"root": "s3://conf/lake", "storage_options": {"secret": "s", "key": "conf-key"}}


def test_arguments_win_over_environment_over_fsspec_config():
    cfg = read_config("memory://arg", {"key": "arg-key"}, "latest", env=ENV, fsspec_conf=CONF)
    assert cfg.root == "memory://arg" and cfg.version == "latest"
    assert cfg.storage_options == {"secret": "s", "key": "arg-key", "anon": False}
    assert cfg.max_staleness_seconds == 2.5
    assert cfg.sources == {
        "root": "arguments",
        "version": "arguments",
        "max_staleness_seconds": "the environment",
        "storage_options": "arguments",
    }


def test_environment_then_fsspec_config():
    cfg = read_config(env=ENV, fsspec_conf=CONF)
    assert (cfg.root, cfg.version) == ("s3://env/lake", "7")
    assert cfg.storage_options["key"] == "env-key"
    cfg = read_config(env={}, fsspec_conf=CONF)
    assert cfg.root == "s3://conf/lake" and cfg.storage_options["key"] == "conf-key"


def test_defaults_and_local_roots_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = read_config(env={}, fsspec_conf={})
    assert cfg.root == os.path.join(str(tmp_path), "lakehouse") and cfg.version is None
    assert cfg.sources["root"] == "default" and cfg.max_staleness_seconds == 0
    assert read_config("rel", env={}, fsspec_conf={}).root == str(tmp_path / "rel")


@pytest.mark.parametrize(
    "kwargs, env, message",
    [
        ({}, {"TRINITYFS_STORAGE_OPTIONS": "{bad"}, "the environment"),
        ({}, {"TRINITYFS_STORAGE_OPTIONS": "[1]"}, "JSON object"),
        ({"max_staleness_seconds": "-1"}, {}, ">= 0"),
        ({"max_staleness_seconds": "soon"}, {}, "seconds"),
        ({"version": "export:"}, {}, "export name"),
        ({"root": ""}, {"TRINITYFS_ROOT": ""}, None),
    ],
)
def test_bad_values_name_their_source(kwargs, env, message):
    if message is None:  # empty values fall through to the default
        assert read_config(**kwargs, env=env, fsspec_conf={}).sources["root"] == "default"
        return
    with pytest.raises(InvalidArgumentError, match=message):
        read_config(**kwargs, env=env, fsspec_conf={})


def test_the_fsspec_config_is_read_by_default(monkeypatch):
    from fsspec.config import conf

    monkeypatch.setitem(conf, "trinity", {"root": "memory://from-fsspec"})
    assert read_config(env={}).root == "memory://from-fsspec"


def test_open_uses_root_options_and_freshness(lake):
    cfg = read_config(lake.url, max_staleness_seconds=5, env={}, fsspec_conf={})
    opened = cfg.open()
    assert opened.url == lake.url and opened.freshness.max_staleness_seconds == 5
