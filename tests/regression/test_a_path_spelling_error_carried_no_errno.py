"""A write to a non-canonical spelling of a name (`%2e%2e` for `..`, `%74` for `t`)
raised PathNameError without errno EINVAL (3561968), unlike every other ValueError of
the filesystem: callers that speak errno (the fuzz suite's contract, FUSE-like wrappers)
saw an untyped error. Found by tests/stress/test_fuzz_fs.py in the intermediate CI."""

from __future__ import annotations

import errno

import pytest

from trinityfs import Lakehouse
from trinityfs.fs import TrinityFileSystem


@pytest.mark.parametrize("path", ["/%2e%2e", "/ns/%74", "/ns/%2f"])
def test_a_write_to_a_spelling_no_name_has_is_einval(tmp_path, path):
    root = str(tmp_path / "lake")
    Lakehouse.create(root).create_namespace("ns")
    fs = TrinityFileSystem(root=root, skip_instance_cache=True)
    for write in (lambda: fs.mkdir(path), lambda: fs.pipe_file(path, b"{}")):
        with pytest.raises(ValueError) as caught:
            write()
        assert getattr(caught.value, "errno", None) == errno.EINVAL, repr(caught.value)
