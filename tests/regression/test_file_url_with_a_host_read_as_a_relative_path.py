"""`Lakehouse.create("file://data/lake")` (one slash short of file:///data/lake) made
the lakehouse under the working directory (./data/lake): fsspec reads a file URL's host
as the first path segment. `file://localhost/x`, which RFC 8089 defines as /x, became
./localhost/x, while the location policy (catalog/locations.py) reads it as /x. Now a
file URL is read as RFC 8089 says: localhost or no host is this machine, another host
is InvalidArgumentError naming it; `file://` alone and a NUL in the URL are refused.
fsspec's `local://` is read the same way (found in the session's review)."""

from __future__ import annotations

import os

import pytest

from trinityfs.catalog.lakehouse import Lakehouse
from trinityfs.errors import InvalidArgumentError


@pytest.mark.parametrize("scheme", ["file", "local"])
def test_a_host_is_refused_and_nothing_is_made(tmp_path, monkeypatch, scheme):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidArgumentError, match="host 'data'"):
        Lakehouse.create(f"{scheme}://data/lake")
    assert os.listdir(tmp_path) == []


def test_localhost_is_this_machine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "abs" / "lake"
    lake = Lakehouse.create(f"file://localhost{target}")
    assert lake.url == f"file://{target}/"
    assert not (tmp_path / "localhost").exists()
    assert Lakehouse.open(f"file://{target}").url == lake.url


@pytest.mark.parametrize("url", ["file://", "lake\x00x"])
def test_no_directory_or_a_nul_is_refused(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidArgumentError):
        Lakehouse.create(url)
    assert os.listdir(tmp_path) == []


def test_plain_paths_and_three_slashes_still_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Lakehouse.create("rel")
    assert Lakehouse.open(f"file://{tmp_path}/rel").url == f"file://{tmp_path}/rel/"
    assert Lakehouse.open(f"file:{tmp_path}/rel").url == f"file://{tmp_path}/rel/"
