from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinityfs.errors import (
    CorruptFileError,
    InvalidArgumentError,
    InvalidNameError,
    UnsafeLocationError,
)
from trinityfs.format.paths import (
    LATEST_HINT,
    OLDEST_VERSION,
    export_root_location,
    full_export_prefix,
    new_definition_location,
    new_lakehouse_def_location,
    new_node_location,
    optimized_path,
    parse_root_node_file,
    root_node_file,
    transaction_location,
    validate_location,
)

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
PREFIX = r"[01]{4}/[01]{4}/[01]{4}/[01]{8}-"


def test_constants():
    assert LATEST_HINT == "_latest_hint.txt"
    assert OLDEST_VERSION == "_oldest_version.txt"


def test_optimized_path_shape_and_determinism():
    path = optimized_path("node-x.arrow")
    assert re.fullmatch(PREFIX + r"node-x\.arrow", path)
    assert optimized_path("node-x.arrow") == path
    with pytest.raises(InvalidArgumentError):
        optimized_path("")


def test_root_node_files():
    assert root_node_file(1) == "_1" + "0" * 63 + ".arrow"
    assert root_node_file(2**64 - 1) == "_" + "1" * 64 + ".arrow"
    for version in [0, 1, 5, 2**40 + 3, 2**64 - 1]:
        assert parse_root_node_file(root_node_file(version)) == version
    for bad in [-1, 2**64, True, 1.0, "1"]:
        with pytest.raises(InvalidArgumentError):
            root_node_file(bad)


@pytest.mark.parametrize(
    "name",
    [
        "_latest_hint.txt",
        "_1" + "0" * 62 + ".arrow",  # 63 digits
        "_1" + "0" * 64 + ".arrow",  # 65 digits
        "_2" + "0" * 63 + ".arrow",
        "1" + "0" * 63 + ".arrow",
        "_1" + "0" * 63 + ".ipc",
        "_1" + "0" * 63 + ".arrow.tmp",
        "x/_1" + "0" * 63 + ".arrow",
        "_export_x.arrow",
        None,
    ],
)
def test_parse_root_node_file_ignores_other_names(name):
    assert parse_root_node_file(name) is None


SAFE = [
    "a",
    "_lakehouse_def_x.binpb",
    "1011/1010/0010/11001011-my-table-definition.binpb",
    "a/b.c/d..e/.hidden/x.",
    "_exports/e/_1" + "0" * 63 + ".arrow",
    "日本/héllo",
    "x/a:b",  # a colon that is not a scheme
]


@pytest.mark.parametrize("loc", SAFE)
def test_safe_locations_pass_unchanged(loc):
    assert validate_location(loc) is loc


HOSTILE = [
    ("", "empty"),
    ("/etc/passwd", "absolute"),
    ("//server/share", "absolute"),
    ("../x", "'..' segment"),
    ("a/../../x", "'..' segment"),
    ("a/..", "'..' segment"),
    ("..", "'..' segment"),
    ("./a", "'.' or '..' segment"),
    ("a/./b", "'.' or '..' segment"),
    (".", "'.' or '..' segment"),
    ("a//b", "empty segment"),
    ("a/", "empty segment"),
    ("a\\b", "backslash"),
    ("..\\x", "backslash"),
    ("s3://bucket/key", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("memory://x", "scheme"),
    ("a/http://x", "scheme"),
    ("c:x", "drive"),
    ("C:/Windows", "drive"),
    ("file:x", "scheme"),
    ("simplecache::s3://b/k", "scheme"),
    ("a/b::c", "'::'"),
    ("a\x00b", "control character"),
    ("a\nb", "control character"),
    ("a\x7fb", "control character"),
    ("~/x", "'~'"),
    ("~root", "'~'"),
    ("a/*", "interpret"),
    ("a?versionId=1", "interpret"),
    ("a[0]", "interpret"),
    ("a#frag", "interpret"),
    ("%2e%2e/x", "interpret"),
    ("\ud800", "not valid UTF-8"),
]


@pytest.mark.parametrize(("loc", "fragment"), HOSTILE)
def test_hostile_locations_are_rejected(loc, fragment):
    with pytest.raises(UnsafeLocationError) as info:
        validate_location(loc)
    assert fragment in str(info.value)
    assert isinstance(info.value, CorruptFileError)


@pytest.mark.parametrize("loc", [None, 1, b"a", ["a"]])
def test_non_str_locations_are_rejected(loc):
    with pytest.raises(UnsafeLocationError, match="must be a str"):
        validate_location(loc)


@given(st.lists(st.sampled_from(["a", "..", ".", "", "b", "~", ":", "/", "\\", "x:"]), max_size=6))
def test_no_accepted_location_escapes(parts):
    loc = "".join(parts)
    try:
        validate_location(loc)
    except UnsafeLocationError:
        return
    segments = loc.split("/")
    assert loc and not loc.startswith("/") and "\\" not in loc
    assert all(seg not in ("", ".", "..") for seg in segments)
    assert not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", loc)


DATA = b"definition bytes"


def test_new_node_location():
    loc = new_node_location(b"node bytes")
    assert re.fullmatch(PREFIX + "node-" + UUID + r"\.arrow", loc)
    assert loc == optimized_path(loc.split("-", 1)[1])
    assert new_node_location(b"node bytes") != loc  # same content, still a new name


def test_new_definition_locations():
    ns_loc = new_definition_location("namespace", "ns1", None, DATA)
    assert re.fullmatch(PREFIX + "namespace-ns1-" + UUID + r"\.binpb", ns_loc)
    table_loc = new_definition_location("table", "ns1", "t1", DATA)
    assert re.fullmatch(PREFIX + "table-ns1-t1-" + UUID + r"\.binpb", table_loc)
    assert table_loc == optimized_path(table_loc.split("-", 1)[1])
    view_loc = new_definition_location("view", "ns1", "v1", DATA)
    assert re.fullmatch(PREFIX + "view-ns1-v1-" + UUID + r"\.binpb", view_loc)


@pytest.mark.parametrize(
    ("ns", "name"),
    [("..", ".."), ("a/../../b", "c/d"), ("s3:", "//x"), ("a*?[]#%", "~\\"), ("日本", "é")],
)
def test_definition_locations_stay_safe_for_any_name(ns, name):
    for loc in (
        new_definition_location("namespace", ns, None, DATA),
        new_definition_location("table", ns, name, DATA),
        new_definition_location("view", ns, name, DATA),
    ):
        assert validate_location(loc) == loc
        assert loc.count("/") == 3


def test_definition_location_file_names_stay_short():
    loc = new_definition_location("table", "n" * 10000, "é" * 5000, DATA)
    assert len(loc.rsplit("/", 1)[1].encode()) < 255


@pytest.mark.parametrize(
    "args",
    [
        ("lakehouse", "ns", None, DATA),
        ("namespace", "ns", "t", DATA),
        ("table", "ns", None, DATA),
        ("view", "", "v", DATA),
        ("table", "ns", "t", None),
    ],
)
def test_definition_location_argument_errors(args):
    with pytest.raises(InvalidArgumentError):
        new_definition_location(*args)


def test_lakehouse_def_location():
    loc = new_lakehouse_def_location(DATA)
    assert re.fullmatch("_lakehouse_def_" + UUID + r"\.binpb", loc)
    assert validate_location(loc) == loc


def test_transaction_location_is_derived_from_the_id():
    assert transaction_location("tid1") == "1010/1101/1010/00101001-txn-tid1.binpb"
    assert transaction_location("tid1") == transaction_location("tid1")


def test_export_locations():
    assert export_root_location("snap1") == "_export_snap1.arrow"
    assert full_export_prefix("snap1") == "_exports/snap1/"


@pytest.mark.parametrize("bad", ["", "a b", "a/b", "..", ".", "a\\b", "s3:x", "a*", "x" * 201])
def test_unsafe_tokens_are_rejected(bad):
    for make in (transaction_location, export_root_location, full_export_prefix):
        with pytest.raises(InvalidNameError):
            make(bad)
