"""Regression: a JSON-object option of the Spark source (`storage-options`,
`snapshot-properties`) nested deeper than Python's recursion limit escaped as a bare
RecursionError instead of an error naming the option."""

from __future__ import annotations

import pytest

from trinityfs.errors import InvalidArgumentError
from trinityfs.spark.options import READ, WRITE, parse_options

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("option", "operation"), [("storage-options", READ), ("snapshot-properties", WRITE)]
)
@pytest.mark.parametrize("text", [DEEP, "{bad", "[1]"])
def test_json_option_errors_name_the_option(tmp_path, option, operation, text):
    options = {"root": str(tmp_path / "lake"), "path": "ns.t", option: text}
    with pytest.raises(InvalidArgumentError, match=f"option '{option}'"):
        parse_options(options, operation)
