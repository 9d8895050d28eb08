"""`trinityfs sync --delete FOLDER trinity://ns` dropped catalog objects whose local file
it did not see, although the file was there:

- a table named with a leading dot (`.t2`, a valid name): `sync` down writes `.t2.json`,
  `sync` up skipped dot-files, so a round trip of an untouched folder dropped `.t2`;
- `<name>.json` as a dangling symlink, or a directory: skipped, so `name` was dropped;
- (for non-root users) a namespace folder it could not list: Path.glob skips it silently.

Now every `<name>.json` counts, and an entry that cannot be read as a definition stops
the sync, naming it, before anything is committed.
"""

from __future__ import annotations

import os

import pytest
from regression_cli import run

from trinityfs import Lakehouse

TABLE = '{"kind": "table", "definition": {"table_format": "ICEBERG"}}'


@pytest.fixture
def lake(tmp_path):
    root = str(tmp_path / "lake")
    assert run(root, "init").status == 0
    assert run(root, "mkdir", "/s").status == 0
    source = tmp_path / "table.json"
    source.write_text(TABLE)
    for name in ("t1", ".t2", "t3"):
        assert run(root, "put", str(source), f"/s/{name}").status == 0
    folder = tmp_path / "folder"
    assert run(root, "sync", "trinity://s", str(folder)).status == 0
    return root, folder


def _tables(root: str) -> list[str]:
    return Lakehouse.open(root).list_tables("s")


def test_round_trip_keeps_dot_named_tables(lake):
    root, folder = lake
    assert sorted(os.listdir(folder)) == [".t2.json", "t1.json", "t3.json"]
    result = run(root, "sync", "--delete", str(folder), "trinity://s")
    assert result.status == 0 and "no change" in result.out
    assert _tables(root) == [".t2", "t1", "t3"]


@pytest.mark.parametrize("damage", ["dangling symlink", "directory"])
def test_unreadable_definition_entry_stops_the_sync(lake, damage):
    root, folder = lake
    target = folder / "t3.json"
    target.unlink()
    if damage == "dangling symlink":
        target.symlink_to(folder / "nowhere.json")
    else:
        target.mkdir()
    before = Lakehouse.open(root).latest_version()
    (folder / "new.json").write_text(TABLE)
    result = run(root, "sync", "--delete", str(folder), "trinity://s")
    assert result.status == 1
    assert "t3.json" in result.err and "nothing changed" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert Lakehouse.open(root).latest_version() == before
    assert _tables(root) == [".t2", "t1", "t3"]


def test_dangling_namespace_folder_stops_a_whole_catalog_sync(tmp_path, lake):
    root, _ = lake
    whole = tmp_path / "whole"
    assert run(root, "sync", "trinity://", str(whole)).status == 0
    (whole / "s").rename(tmp_path / "moved")
    (whole / "s").symlink_to(tmp_path / "gone")
    result = run(root, "sync", "--delete", str(whole), "trinity://")
    assert result.status == 1 and "dangling symlink" in result.err
    assert _tables(root) == [".t2", "t1", "t3"]


def test_other_files_are_still_left_alone(lake):
    root, folder = lake
    (folder / "notes.txt").write_text("not a definition")
    (folder / "t1.json.swp").write_text("editor state")
    result = run(root, "sync", "--delete", str(folder), "trinity://s")
    assert result.status == 0
    assert _tables(root) == [".t2", "t1", "t3"]


def test_a_symlink_to_a_file_at_the_top_is_left_alone(tmp_path, lake):
    """Only a dangling symlink stops a whole-catalog sync: one to a file (a README link
    beside the namespace folders) was called "a dangling symlink" and stopped it."""
    root, _ = lake
    whole = tmp_path / "whole"
    assert run(root, "sync", "trinity://", str(whole)).status == 0
    (tmp_path / "README").write_text("notes")
    (whole / "README").symlink_to(tmp_path / "README")
    result = run(root, "sync", "--delete", str(whole), "trinity://")
    assert result.status == 0, result.err
    assert _tables(root) == [".t2", "t1", "t3"]
