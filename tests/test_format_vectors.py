"""Every entry of the shared format conformance vectors (FORMAT.md requires this test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trinityfs.errors import InvalidNameError
from trinityfs.format.keys import KeyCodec, ObjectKey, decode_type_id, encode_type_id
from trinityfs.format.names import validate_name
from trinityfs.format.paths import optimized_path, parse_root_node_file, root_node_file

# A byte-identical copy ships with the tests so the suite runs from any clone;
# test_vendored_vectors_match_shared checks it against ../shared when that is beside the repo.
VECTORS_PATH = Path(__file__).resolve().parent / "vectors" / "format-vectors.json"
SHARED_VECTORS_PATH = (
    Path(__file__).resolve().parents[2] / "shared" / "vectors" / "format-vectors.json"
)
HANDLED_SECTIONS = {
    "description",
    "type_id_encoding",
    "name_validation",
    "object_keys",
    "optimized_paths",
    "root_node_files",
    "key_order",
}


def _load() -> dict:
    # Deliberately not a skip: the conformance vectors are mandatory.
    assert VECTORS_PATH.is_file(), f"format vectors missing at {VECTORS_PATH}"
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


VECTORS = _load()


@pytest.mark.skipif(not SHARED_VECTORS_PATH.is_file(), reason="no ../shared beside this clone")
def test_vendored_vectors_match_shared() -> None:
    assert VECTORS_PATH.read_bytes() == SHARED_VECTORS_PATH.read_bytes(), (
        f"{VECTORS_PATH} differs from {SHARED_VECTORS_PATH}: copy the shared vectors again"
    )


def _cases(section: str) -> list:
    cases = VECTORS[section]
    assert cases, f"section {section} is empty"
    return cases


def test_every_section_is_handled():
    assert set(VECTORS) == HANDLED_SECTIONS, (
        f"unhandled vector sections: {sorted(set(VECTORS) - HANDLED_SECTIONS)}; "
        f"vanished sections: {sorted(HANDLED_SECTIONS - set(VECTORS))}"
    )


@pytest.mark.parametrize("case", _cases("type_id_encoding"), ids=lambda c: str(c["type_id"]))
def test_type_id_encoding(case):
    assert encode_type_id(case["type_id"]) == case["encoded"]
    assert decode_type_id(case["encoded"]) == case["type_id"]


@pytest.mark.parametrize("case", _cases("name_validation"), ids=repr)
def test_name_validation(case):
    if case["valid"]:
        assert validate_name(case["name"], case["max_bytes"]) == case["name"]
    else:
        with pytest.raises(InvalidNameError):
            validate_name(case["name"], case["max_bytes"])


@pytest.mark.parametrize("case", _cases("object_keys"), ids=lambda c: repr(c["key"]))
def test_object_keys(case):
    size = case["max_bytes"]
    codec = KeyCodec(size, size, size)
    obj = ObjectKey(case["kind"], case["namespace"], case["name"])
    assert codec.encode(obj) == case["key"]
    assert codec.object_key(case["kind"], case["namespace"], case["name"]) == case["key"]
    assert codec.decode(case["key"]) == obj


@pytest.mark.parametrize("case", _cases("optimized_paths"), ids=lambda c: c["original"])
def test_optimized_paths(case):
    assert optimized_path(case["original"]) == case["optimized"]


@pytest.mark.parametrize("case", _cases("root_node_files"), ids=lambda c: str(c["version"]))
def test_root_node_files(case):
    assert root_node_file(case["version"]) == case["file"]
    assert parse_root_node_file(case["file"]) == case["version"]


@pytest.mark.parametrize("case", _cases("key_order"), ids=lambda c: str(c["max_bytes"]))
def test_key_order(case):
    size = case["max_bytes"]
    codec = KeyCodec(size, size, size)
    names = case["names_in_key_order"]
    keys = [codec.namespace_key(name) for name in names]
    assert sorted(keys) == keys
    assert sorted(keys, key=lambda key: key.encode("utf-8")) == keys
    assert len(set(keys)) == len(keys)
