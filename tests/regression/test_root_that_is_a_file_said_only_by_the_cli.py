"""A lakehouse root that is a file was said plainly only by the CLI, which parsed file
URLs by hand for it (`removeprefix("file://")`): `file://localhost/x`, `local:///x` and
every other front end (the API, fsspec) got "exists of '_0000...arrow' under file:///x/
failed: NotADirectoryError". Now the storage says it where it opens the root, once for
every front end, and the CLI's own parsing is gone."""

from __future__ import annotations

import pytest
from regression_cli import run

from trinityfs import Lakehouse
from trinityfs.errors import LakehouseNotFoundError


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "afile"
    path.write_text("not a lakehouse")
    return path


@pytest.mark.parametrize("form", ["file://localhost{}", "local://{}"])
def test_cli_url_forms(a_file, form) -> None:
    for command in (["ls", "/"], ["fsck"], ["expire", "-n"]):
        result = run(form.format(a_file), *command)
        assert result.status == 1
        assert result.err.count("\n") == 1, result.err
        assert f"no lakehouse at {a_file}: it is a file, not a directory" in result.err


def test_api_and_fsspec(a_file, tmp_path) -> None:
    with pytest.raises(LakehouseNotFoundError, match="it is a file, not a directory"):
        Lakehouse.open(str(a_file))
    with pytest.raises(LakehouseNotFoundError, match="its path holds a file"):
        Lakehouse.open(str(a_file / "lake"))
    from trinityfs.fs.spec import TrinityFileSystem

    with pytest.raises(Exception, match="it is a file, not a directory"):
        TrinityFileSystem(root=f"file://localhost{a_file}", skip_instance_cache=True).ls("/")
    assert a_file.read_text() == "not a lakehouse"
