"""Hostile paths through the fsspec filesystem (`TrinityFileSystem`), fuzzed.

Whatever the path (``..``, empty and dot components, control characters, lone
surrogates, URL schemes, globs, version directories that do not exist, very long
names), every filesystem call either works or raises the filesystem's typed errors
(an OSError with an errno, or InvalidRequest, a ValueError carrying EINVAL), never
anything else, never a hang, and opens or lists no file outside the lakehouse root.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
from figures import count
from hypothesis import given
from hypothesis import strategies as st
from lake_fixtures import SMALL_TREE
from test_fuzz import FUZZ, guarded

from trinityfs import Lakehouse

fs_spec = pytest.importorskip("trinityfs.fs.spec")

pytestmark = pytest.mark.stress

TABLE = b'{"kind": "table", "definition": {"properties": {"p": "q"}}}'

segments = st.one_of(
    st.sampled_from(
        [
            *("a", "b", "t1", "v", "latest", "0", "1", "3", "99999999999999999999", "-1"),
            *("..", ".", "", "~", "*", "?", "[a]", "**", "%2e%2e", "_latest_hint.txt"),
            *("2026-01-01T00:00:00Z", "1970-01-01", "x" * 300, "a b", "tab\there"),
        ]
    ),
    st.text(max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=2),
)
paths = st.builds(
    lambda prefix, parts, trailing: prefix + "/".join(parts) + trailing,
    st.sampled_from(["", "/", "//", "trinity://", "trinity::", "file://", "../", "s3://b/"]),
    st.lists(segments, max_size=5),
    st.sampled_from(["", "/", "/."]),
)


def typed_fs(call) -> str:
    """The filesystem's typed errors: OSError, or a ValueError carrying EINVAL
    (InvalidRequest, ContentError)."""
    try:
        call()
    except OSError:
        return "error"
    except ValueError as exc:
        assert getattr(exc, "errno", None) == errno.EINVAL, f"untyped {exc!r}"
        return "error"
    return "ok"


@pytest.fixture
def fs(tmp_path) -> tuple[Any, Path]:
    root = tmp_path / "lake"
    lake = Lakehouse.create(str(root), **SMALL_TREE)
    lake.create_namespace("a")
    lake.create_table("a", "t1", {"properties": {"k": "v"}})
    lake.create_view("a", "v", {})
    filesystem = fs_spec.TrinityFileSystem(root=str(root), skip_instance_cache=True)
    return filesystem, root


@FUZZ
@given(path=paths, other=paths)
def test_paths(fs, path: str, other: str) -> None:
    filesystem, root = fs
    count("filesystem paths")
    with guarded(root):
        for call in (
            lambda: filesystem.info(path),
            lambda: filesystem.exists(path),
            lambda: filesystem.isdir(path),
            lambda: filesystem.ls(path),
            lambda: filesystem.cat_file(path),
            lambda: filesystem.find(path),
            lambda: filesystem.pipe_file(path, TABLE),
            lambda: filesystem.pipe_file(path, b'{"properties": {"p": "q"}}'),
            lambda: filesystem.mkdir(path),
            lambda: filesystem.mv(path, other),
            lambda: filesystem.rm(path),
        ):
            typed_fs(call)
            filesystem.invalidate_cache()
        Lakehouse.open(str(root)).check()
