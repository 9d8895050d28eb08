"""jsontext: JSON from outside is refused by its nesting before the parser recurses."""

from __future__ import annotations

import json

import pytest

from trinityfs import jsontext
from trinityfs.errors import InvalidArgumentError, JsonTooDeepError


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[", "{{{"]', 1),  # brackets inside strings do not count
        (r'["a\"[[[", [2]]', 2),  # an escaped quote does not end the string
        (r'["a\\", [[2]]]', 3),  # an escaped backslash does: the brackets after it count
        ('[["é[[", "\u2028{"]]', 2),
    ],
)
def test_nesting_is_measured_as_the_parser_would_see_it(text, depth):
    for form in (text, text.encode(), bytearray(text.encode())):
        assert not jsontext.nests_deeper_than(form, depth)
        assert depth == 0 or jsontext.nests_deeper_than(form, depth - 1)
    json.loads(text)  # the cases are real JSON


def test_loads_refuses_deep_text_before_parsing_with_a_typed_value_error():
    hostile = "[" * 200_000 + "]" * 200_000
    with pytest.raises(
        JsonTooDeepError, match=r"nested too deeply \(more than 64 levels\)"
    ) as caught:
        jsontext.loads(hostile)
    assert isinstance(caught.value, InvalidArgumentError | ValueError)
    assert jsontext.loads("[" * 64 + "]" * 64, max_depth=64) is not None
    with pytest.raises(JsonTooDeepError):
        jsontext.loads("[" * 65 + "]" * 65, max_depth=64)


def test_loads_passes_malformed_text_and_options_through_to_json():
    with pytest.raises(json.JSONDecodeError):
        jsontext.loads("[1,")
    assert jsontext.loads('{"a": 1, "a": 2}', object_pairs_hook=list) == [("a", 1), ("a", 2)]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32-le"])
def test_bytes_are_measured_in_the_encoding_json_would_read_them_in(encoding):
    # In UTF-16/32, U+4E22 has a byte 0x22 (a quote): measured as raw bytes, the deep
    # brackets after it looked like the inside of a string (review6 F1).
    data = ('["\u4e22", ' + "[" * 100_000 + "]" * 100_000 + ', "x"]').encode(encoding)
    assert jsontext.nests_deeper_than(data, 64)
    with pytest.raises(JsonTooDeepError):
        jsontext.loads(data)
    assert jsontext.loads('["\u4e22", [[1]]]'.encode(encoding)) == ["\u4e22", [[1]]]


@pytest.mark.parametrize("value", [10**13, [123, 125], 7, None, {"a": 1}])
def test_a_value_that_is_not_text_is_a_type_error_as_in_json(value):
    # bytes(10**13) would allocate 10 TB, bytes([123, 125]) is b"{}" (review6 F7)
    with pytest.raises(TypeError, match="must be str, bytes or bytearray"):
        jsontext.loads(value)
    with pytest.raises(TypeError):
        jsontext.nests_deeper_than(value, 64)
