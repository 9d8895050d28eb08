"""A forged root (valid checksum) whose key ns.t1 points at table t2's definition file:
since 4b1743c `describe_table` refuses it, but `cat /ns/t1` through a trinity://
filesystem that had already rendered t2 answered t2's JSON from the render cache, which
is keyed by location (reported by helper integrity3). The owner check now runs before
the cache is asked."""

from __future__ import annotations

import pytest
from test_key_pointing_at_another_objects_definition_read_as_its_own import (
    _lake_pointing_t1_at,
)

from trinityfs.fs.spec import TrinityFileSystem


def test_cat_of_a_forged_key_after_its_target_was_rendered_is_refused(tmp_path):
    lake = _lake_pointing_t1_at(tmp_path, "t2")
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    assert b'"t2"' in fs.cat("/ns/t2")
    with pytest.raises(OSError) as caught:
        fs.cat("/ns/t1")
    assert "t2" in str(caught.value) or "another" in str(caught.value)


def test_cat_of_a_forged_key_first_is_refused(tmp_path):
    lake = _lake_pointing_t1_at(tmp_path, "t2")
    fs = TrinityFileSystem(root=lake.url, skip_instance_cache=True)
    with pytest.raises(OSError):
        fs.cat("/ns/t1")
    assert b'"t2"' in fs.cat("/ns/t2")
