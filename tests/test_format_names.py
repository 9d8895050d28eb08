from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinityfs.errors import InvalidArgumentError, InvalidNameError
from trinityfs.format.names import validate_name


def test_valid_names_are_returned_unchanged():
    for name in ["a", "ns1", "a.b-c_d", "日本", "héllo", "~!@#$%^&*()", "x" * 100]:
        assert validate_name(name, 100) is name


def test_message_names_the_rule_and_kind():
    with pytest.raises(InvalidNameError) as info:
        validate_name("a b", 100, "table")
    assert str(info.value) == (
        "invalid table name 'a b': contains a space (0x20), which names may not contain"
    )


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "is empty"),
        ("tab\tname", "control character (0x09)"),
        ("nul\x00", "control character (0x00)"),
        ("x\x1f", "control character (0x1F)"),
        ("line\nbreak", "control character (0x0A)"),
        ("del\x7f", "DEL character (0x7F)"),
        ("has space", "space (0x20)"),
        ("toolongname", "11 bytes in UTF-8, more than the maximum of 8 bytes"),
        ("\udc80x", "not valid UTF-8"),
        ("ok\ud800", "lone surrogate U+D800"),
    ],
)
def test_each_rule_has_its_own_message(name, fragment):
    with pytest.raises(InvalidNameError) as info:
        validate_name(name, 8, "namespace")
    assert fragment in str(info.value)
    assert "namespace name" in str(info.value)


def test_size_counts_utf8_bytes_not_characters():
    assert validate_name("日本", 6) == "日本"
    with pytest.raises(InvalidNameError, match="7 bytes"):
        validate_name("日本x", 6)
    assert validate_name("é" * 50, 100)
    with pytest.raises(InvalidNameError):
        validate_name("é" * 51, 100)


@pytest.mark.parametrize("name", [None, 5, b"bytes", ["a"]])
def test_non_str_is_invalid_name(name):
    with pytest.raises(InvalidNameError, match="must be a str"):
        validate_name(name, 100, "view")


@pytest.mark.parametrize("max_bytes", [0, -1, True, "8", None])
def test_bad_max_bytes_is_invalid_argument(max_bytes):
    with pytest.raises(InvalidArgumentError):
        validate_name("a", max_bytes)


def test_huge_names_are_shortened_in_messages():
    with pytest.raises(InvalidNameError) as info:
        validate_name("x" * 100_000, 100)
    assert len(str(info.value)) < 300


@given(st.text(min_size=1, max_size=30))
def test_matches_the_byte_rule(name):
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:
        raw = None
    expected = (
        raw is not None and 1 <= len(raw) <= 40 and not any(b <= 0x20 or b == 0x7F for b in raw)
    )
    try:
        validate_name(name, 40)
        assert expected
    except InvalidNameError:
        assert not expected
