"""Issue 11 item 2: an exception inside `with fsspec.open("trinity://ns/t", "wb")` (or
"w") committed what had been written so far (nothing: an EMPTY definition over the
table; or a valid JSON prefix), because fsspec's OpenFile closes its files without
passing the exception on. Only a clean close may commit."""

from __future__ import annotations

import json

import fsspec
import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem

NO_FSYNC = {"fsync": False}
GOOD = {"kind": "table", "definition": {"table_format": "ICEBERG", "properties": {"a": "1"}}}
OTHER = {"kind": "table", "definition": {"table_format": "ICEBERG", "properties": {"b": "2"}}}


@pytest.fixture
def root(tmp_path) -> str:
    path = str(tmp_path / "lake")
    lake = Lakehouse.create(path, storage_options=NO_FSYNC)
    lake.create_namespace("ns")
    lake.create_table("ns", "t", GOOD["definition"])
    return path


def _opts(root: str) -> dict:
    return {"root": root, "storage_options": NO_FSYNC}


def _state(root: str) -> tuple[int, bytes]:
    fs = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    return fs.lake.latest_version(), fs.cat_file("/ns/t")


@pytest.mark.parametrize("mode", ["wb", "w"])
def test_exception_before_any_write_commits_nothing(root: str, mode: str) -> None:
    before = _state(root)
    with pytest.raises(RuntimeError), fsspec.open("trinity://ns/t", mode, **_opts(root)):
        raise RuntimeError("the producer failed")
    assert _state(root) == before


@pytest.mark.parametrize("mode", ["wb", "w"])
def test_exception_after_a_valid_prefix_commits_nothing(root: str, mode: str) -> None:
    before = _state(root)
    text = json.dumps(OTHER)
    with pytest.raises(RuntimeError), fsspec.open("trinity://ns/t", mode, **_opts(root)) as f:
        f.write(text if mode == "w" else text.encode())  # a complete, valid document
        raise RuntimeError("failed after writing")
    assert _state(root) == before


def test_exception_inside_json_dump_commits_nothing(root: str) -> None:
    before = _state(root)
    with pytest.raises(TypeError), fsspec.open("trinity://ns/t", "w", **_opts(root)) as f:
        json.dump({"kind": "table", "definition": {"properties": {"x": object()}}}, f)
    assert _state(root) == before


def test_clean_close_still_commits_even_inside_an_except_block(root: str) -> None:
    version, _ = _state(root)
    try:
        raise KeyError("handled before the file was opened")
    except KeyError:
        with fsspec.open("trinity://ns/t", "w", **_opts(root)) as f:
            json.dump(OTHER, f)
    after, data = _state(root)
    assert after == version + 1
    assert json.loads(data)["definition"]["properties"] == {"b": "2"}


def test_close_in_finally_of_a_failing_block_commits_nothing(root: str) -> None:
    before = _state(root)
    fs = TrinityFileSystem(root=root, storage_options=NO_FSYNC, skip_instance_cache=True)
    f = fs.open("/ns/t", "wb")
    with pytest.raises(RuntimeError):
        try:
            f.write(json.dumps(OTHER).encode())
            raise RuntimeError("boom")
        finally:
            f.close()
    assert _state(root) == before
