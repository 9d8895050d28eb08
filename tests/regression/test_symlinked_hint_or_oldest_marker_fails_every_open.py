"""Regression: a `_latest_hint.txt` that is a symbolic link (or a directory, or a FIFO)
made `Lakehouse.open` and every commit fail (SymlinkInRootError, StorageError) or hang
forever (a FIFO); the same for `_oldest_version.txt`, with a message that did not say
what the marker is or how to repair it.

The hint is advisory: one that is no regular file is ignored like a malformed one (the
roots decide) and the next commit replaces it by rename, never writing through the link.
The oldest marker says which versions expiration may have deleted, so it is never
followed: opening fails, promptly, naming the file and the repair (docs/FORMAT-CHOICES.md
"A marker that is no regular file").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from waits import within

from trinityfs import Lakehouse
from trinityfs.errors import SymlinkInRootError
from trinityfs.format.paths import LATEST_HINT, OLDEST_VERSION, root_node_file


def _lake(tmp_path: Path) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"table_format": "ICEBERG"})
    return lake  # latest version 2


def _plant(tmp_path: Path, name: str, kind: str, text: str) -> Path:
    """Replace marker `name` by a link to a file holding `text` (outside the lake), a
    dangling link, a directory or a FIFO; the outside file is returned."""
    outside = tmp_path / "outside.txt"
    outside.write_text(text)
    path = tmp_path / "lake" / name
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "link":
        os.symlink(outside, path)
    elif kind == "dangling":
        os.symlink(tmp_path / "nowhere.txt", path)
    elif kind == "dir":
        path.mkdir()
    else:
        os.mkfifo(path)
    return outside


@pytest.mark.parametrize("kind", ["link", "dangling", "dir", "fifo"])
@pytest.mark.parametrize("claim", ["0", "999"])
def test_a_hint_that_is_no_regular_file_is_ignored(tmp_path, kind, claim):
    lake = _lake(tmp_path)
    outside = _plant(tmp_path, LATEST_HINT, kind, claim)
    fresh = within(30, lambda: Lakehouse.open(lake.url))
    assert fresh.latest_version() == 2
    assert fresh.list_tables("ns") == ["t"]
    version = within(30, lambda: fresh.create_table("ns", "u", {"table_format": "ICEBERG"}))
    assert version == 3
    hint = tmp_path / "lake" / LATEST_HINT
    if kind != "dir":  # replaced by rename (a directory cannot be: ignored by readers)
        assert not hint.is_symlink() and hint.is_file()
        assert int(hint.read_text()) == 3
    assert outside.read_text() == claim  # never written through the link
    assert Lakehouse.open(lake.url).latest_version() == 3


@pytest.mark.parametrize("kind", ["link", "dangling", "dir", "fifo"])
def test_an_oldest_marker_that_is_no_regular_file_is_refused_by_name(tmp_path, kind):
    lake = _lake(tmp_path)
    outside = _plant(tmp_path, OLDEST_VERSION, kind, "1")

    def open_it() -> None:
        Lakehouse.open(lake.url).latest_version()

    with pytest.raises(SymlinkInRootError) as caught:
        within(30, open_it)
    message = str(caught.value)
    assert OLDEST_VERSION in message and "not a regular file" in message
    assert "trinityfs expire" in message  # the repair
    assert outside.read_text() == "1"


def test_an_oldest_marker_link_is_never_followed_even_when_it_claims_less(tmp_path):
    """A link to a file saying 0 (every version readable) is refused too: following it
    could expose versions expiration is deleting. A cold writer commits nothing."""
    lake = _lake(tmp_path)
    _plant(tmp_path, OLDEST_VERSION, "link", "0")
    with pytest.raises(SymlinkInRootError, match="trinityfs expire"):
        Lakehouse.open(lake.url).create_table("ns", "u", {"table_format": "ICEBERG"})
    assert not (tmp_path / "lake" / root_node_file(3)).exists()


def test_the_repair_the_message_names_works(tmp_path):
    lake = _lake(tmp_path)
    _plant(tmp_path, OLDEST_VERSION, "link", "1")
    with pytest.raises(SymlinkInRootError, match="remove it and run `trinityfs expire`"):
        Lakehouse.open(lake.url)
    (tmp_path / "lake" / OLDEST_VERSION).unlink()
    fresh = Lakehouse.open(lake.url)
    fresh.expire()
    marker = tmp_path / "lake" / OLDEST_VERSION
    assert Lakehouse.open(lake.url).list_tables("ns") == ["t"]
    assert not marker.exists() or (marker.is_file() and not marker.is_symlink())
