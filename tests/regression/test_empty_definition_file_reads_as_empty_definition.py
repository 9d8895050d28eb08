"""Issue 10 case 9: a definition file truncated to 0 bytes read as an empty definition.

protobuf decodes 0 bytes as a message with every field unset, so at 937923f a table whose
definition file was truncated to 0 bytes described as a table with no id, schema or
properties. trinityfs never writes an empty definition, so 0 bytes is corruption now.
"""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError


def test_truncated_to_zero_bytes_is_an_error(tmp_path):
    url = str(tmp_path / "lake")
    lake = Lakehouse.create(url, storage_options={"fsync": False})
    lake.create_namespace("ns")
    lake.create_table("ns", "t", {"properties": {"owner": "alice"}})
    location = next(loc for ref, loc in lake.snapshot().iter_all() if ref.kind == "table")
    (tmp_path / "lake" / location).write_bytes(b"")

    fresh = Lakehouse.open(url)
    with pytest.raises(CorruptFileError) as err:
        fresh.describe_table("ns", "t")
    assert err.value.path == location
    assert err.value.version == fresh.latest_version()
    assert not fresh.fsck().ok
