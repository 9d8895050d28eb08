"""A stored LakehouseDef whose export entry holds an unsafe location (another writer's,
or a hostile one) was reported as "corrupt file ../../etc/passwd": the error named the
location inside the definition as the corrupt file, so `trinityfs fsck`, the CLI and
every front end pointed the operator at a path outside the lakehouse instead of the
definition file to repair. It now names the definition file and the export entry."""

from __future__ import annotations

import pytest

from trinityfs.errors import UnsafeLocationError
from trinityfs.format.definitions import decode_lakehouse_def, new_lakehouse_def

FILE = "_lakehouse_def_0123.binpb"


def test_the_definition_file_is_named_with_the_export_entry() -> None:
    ldef = new_lakehouse_def()
    ldef.exported_snapshots["evil"] = "../../etc/passwd"
    with pytest.raises(UnsafeLocationError) as raised:
        decode_lakehouse_def(ldef.SerializeToString(), FILE)
    assert raised.value.path == FILE
    assert "export 'evil'" in str(raised.value)
    assert "../../etc/passwd" in str(raised.value)  # the value is still shown
