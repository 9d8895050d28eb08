"""Export names skipped the catalog's policy for new names: `export("cafe\\u0301")` (NFD)
was accepted, so an export and a twin that prints the same ("café" in NFC) could both be
made, and `/v/café` reached only one of them. Now an export name must be NFC (the error
names the spelling to use), and "." and ".." are refused by the same rule as tables."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import InvalidNameError


@pytest.fixture
def lake(tmp_path):
    lake = Lakehouse.create(str(tmp_path / "lake"))
    lake.create_namespace("a")
    return lake


@pytest.mark.parametrize("name", ["cafe\u0301", ".", ".."])
def test_export_names_follow_the_name_policy(lake, name):
    before = lake.latest_version()
    with pytest.raises(InvalidNameError):
        lake.export(name)
    assert lake.exports() == [] and lake.latest_version() == before


def test_nfc_export_names_still_work(lake):
    assert lake.export("caf\u00e9").name == "caf\u00e9"
    assert [e.name for e in lake.exports()] == ["caf\u00e9"]
    assert lake.at(export="caf\u00e9").version == 1
