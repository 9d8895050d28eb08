"""JSON nested thousands deep escaped as a bare RecursionError where trinityfs reads JSON
without the REST server's pre-check: PyIceberg's `storage-options` property and a stored
distributed transaction's dependencies row. Now every reader measures nesting first
(trinityfs.jsontext): a typed error naming what was read."""

from __future__ import annotations

import pytest

from trinityfs import Lakehouse
from trinityfs.errors import CorruptFileError
from trinityfs.iceberg.catalog import TrinityCatalog
from trinityfs.lifecycle.dtxn_files import dependencies_from_json

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deep_storage_options_property_is_a_value_error_naming_the_property(tmp_path):
    Lakehouse.create(str(tmp_path / "lake"))
    with pytest.raises(ValueError, match=r"storage-options must be a JSON object.*nested"):
        TrinityCatalog("c", root=str(tmp_path / "lake"), **{"storage-options": DEEP})


def test_a_deep_stored_dependencies_row_is_a_corrupt_file():
    with pytest.raises(CorruptFileError, match=r"txn/t1.*dependencies row.*nested"):
        dependencies_from_json('{"written": ' + DEEP + "}", "txn/t1")


def test_a_deep_utf16_rest_body_is_400_not_a_recursion_error():
    from trinityfs.rest.errors import RestError
    from trinityfs.rest.requests import json_object

    body = ('{"namespace": ["\u4e22"], "properties": ' + DEEP + ', "x": "y"}').encode("utf-16-le")
    with pytest.raises(RestError) as caught:
        json_object(body)
    assert caught.value.status == 400 and "nests deeper" in str(caught.value)


@pytest.mark.parametrize("value", [[123, 125], 10**13])
def test_a_storage_options_property_that_is_not_text_is_refused(tmp_path, value):
    Lakehouse.create(str(tmp_path / "lake"))
    with pytest.raises(ValueError, match="storage-options must be a JSON object"):
        TrinityCatalog("c", root=str(tmp_path / "lake"), **{"storage-options": value})
