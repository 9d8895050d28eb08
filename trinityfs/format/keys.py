"""Tree keys (FORMAT.md section 3): system keys and encoded object keys.

An object key is the 4-character encoded type id followed by the space-padded names,
e.g. table key `C===<ns padded to namespace max><table padded to table max>`. Padding
is counted in UTF-8 bytes, so keys of one kind all have the same byte length. Python
str comparison (code point order) equals the UTF-8 byte order the format prescribes.
"""

from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass
from typing import Any

from trinityfs.errors import InvalidArgumentError, InvalidNameError
from trinityfs.format.names import validate_name

TYPE_LAKEHOUSE = 0
TYPE_NAMESPACE = 1
TYPE_TABLE = 2
TYPE_VIEW = 3
TYPE_TRANSACTION = 4

KEY_LAKEHOUSE_DEF = "lakehouse_def"
KEY_PREVIOUS_ROOT = "previous_root"
KEY_ROLLBACK_FROM_ROOT = "rollback_from_root"
KEY_CREATED_AT_MILLIS = "created_at_millis"
KEY_N_KEYS = "n_keys"

# In the order a node file lists them.
SYSTEM_KEYS = (
    KEY_LAKEHOUSE_DEF,
    KEY_PREVIOUS_ROOT,
    KEY_ROLLBACK_FROM_ROOT,
    KEY_CREATED_AT_MILLIS,
    KEY_N_KEYS,
)

KINDS = ("namespace", "table", "view")

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_TYPE_ID_SIZE = 4
_KIND_TYPE_ID = {"namespace": TYPE_NAMESPACE, "table": TYPE_TABLE, "view": TYPE_VIEW}


def encode_type_id(type_id: int) -> str:
    """Encode an object type id (0..63) as one base64 digit right-padded with '='."""
    if isinstance(type_id, bool) or not isinstance(type_id, int):
        raise InvalidArgumentError(f"object type id must be an int, got {type_id!r}")
    if not 0 <= type_id < len(_ALPHABET):
        raise InvalidArgumentError(f"object type id {type_id} is outside 0..63")
    return _ALPHABET[type_id] + "=" * (_TYPE_ID_SIZE - 1)


def decode_type_id(encoded: str) -> int:
    """Inverse of encode_type_id; raises InvalidArgumentError on anything else."""
    if (
        not isinstance(encoded, str)
        or len(encoded) != _TYPE_ID_SIZE
        or encoded[1:] != "=" * (_TYPE_ID_SIZE - 1)
        or encoded[0] not in _ALPHABET
    ):
        raise InvalidArgumentError(f"not an encoded object type id: {encoded!r}")
    return _ALPHABET.index(encoded[0])


_FORBIDDEN_IN_NAME = re.compile(r"[\x00-\x20\x7f]")  # as trinityfs.format.names
#: what str.rstrip() strips from an ASCII string besides spaces
_ASCII_WHITESPACE_BUT_SPACE = "\t\n\v\f\r\x1c\x1d\x1e\x1f"
#: keys joined at a time by `_plain_ascii` (bounds the joined copy to ~30 KB)
_PLAIN_CHUNK = 128


def _plain_ascii(keys: list[str]) -> bool:
    """Whether every key is ASCII without whitespace other than spaces, a chunk of keys
    joined at a time: isascii() of a str is O(1) and `in` a memchr."""
    for start in range(0, len(keys), _PLAIN_CHUNK):
        chunk = "".join(keys[start : start + _PLAIN_CHUNK])
        if not chunk.isascii() or any(ch in chunk for ch in _ASCII_WHITESPACE_BUT_SPACE):
            return False
    return True


def _bulk_names(keys: list[str], prefix: str, size: int) -> list[str] | None:
    """The names in `keys` (each `prefix` + a name padded with spaces to `size`
    characters), checked in a few C-speed passes over the whole list instead of a
    decode per key; None when any key is not plainly such a key with a valid ASCII name
    (non-ASCII, wrong prefix or length, empty or forbidden name, padding other than
    spaces): the caller then decodes key by key for the precise error."""
    if not keys:
        return []
    # str.rstrip() without an argument is ~8x faster than rstrip(" "); it also strips
    # the other ASCII whitespace, so `_plain_ascii` makes sure the keys hold none.
    names = list(map(str.rstrip, map(operator.itemgetter(slice(len(prefix), None)), keys)))
    if (
        _plain_ascii(keys)
        and set(map(len, keys)) == {size}
        and all(map(str.startswith, keys, itertools.repeat(prefix)))
        and "" not in names
        and _FORBIDDEN_IN_NAME.search("".join(names)) is None
    ):
        return names
    return None


_KIND_PREFIX = {kind: encode_type_id(type_id) for kind, type_id in _KIND_TYPE_ID.items()}
_PREFIX_KIND = {prefix: kind for kind, prefix in _KIND_PREFIX.items()}


def _check_kind(kind: Any) -> str:
    if not isinstance(kind, str) or kind not in _KIND_TYPE_ID:
        raise InvalidArgumentError(f"unknown object kind {kind!r}; expected one of {KINDS}")
    return kind


@dataclass(frozen=True)
class ObjectKey:
    """The decoded form of an object key; `name` is None for a namespace."""

    kind: str
    namespace: str
    name: str | None = None

    def __post_init__(self) -> None:
        _check_kind(self.kind)
        if (self.kind == "namespace") != (self.name is None):
            raise InvalidArgumentError(
                f"a {self.kind} key {'must not' if self.kind == 'namespace' else 'must'} "
                f"have a name (got {self.name!r})"
            )


#: names whose object keys a KeyCodec remembers for lookups (~0.5 KB each)
OBJECT_KEYS_MEMO = 1024


class KeyCodec:
    """Encodes and decodes object keys for one set of name size limits (in bytes)."""

    def __init__(self, namespace_max: int, table_max: int, view_max: int):
        for label, value in (
            ("namespace", namespace_max),
            ("table", table_max),
            ("view", view_max),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgumentError(
                    f"{label} name max size must be a positive int, got {value!r}"
                )
        self.namespace_max = namespace_max
        self.table_max = table_max
        self.view_max = view_max
        self._name_max = {"table": table_max, "view": view_max}
        # (namespace, name) -> object_keys' answer: every path lookup asks it again
        self._object_keys: dict[tuple[str, str], dict[str, str]] = {}

    @classmethod
    def from_lakehouse_def(cls, ldef: Any) -> KeyCodec:
        """Build the codec from a LakehouseDef's name size limits."""
        return cls(
            ldef.namespace_name_max_size_bytes,
            ldef.table_name_max_size_bytes,
            ldef.view_name_max_size_bytes,
        )

    def __repr__(self) -> str:
        return f"KeyCodec({self.namespace_max}, {self.table_max}, {self.view_max})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KeyCodec):
            return NotImplemented
        return (self.namespace_max, self.table_max, self.view_max) == (
            other.namespace_max,
            other.table_max,
            other.view_max,
        )

    def __hash__(self) -> int:
        return hash((self.namespace_max, self.table_max, self.view_max))

    @staticmethod
    def _pad(name: str, max_bytes: int, kind: str) -> str:
        validate_name(name, max_bytes, kind)
        return name + " " * (max_bytes - len(name.encode("utf-8")))

    def namespace_key(self, namespace: str) -> str:
        return _KIND_PREFIX["namespace"] + self._pad(namespace, self.namespace_max, "namespace")

    def table_key(self, namespace: str, name: str) -> str:
        return self.children_prefix("table", namespace) + self._pad(name, self.table_max, "table")

    def view_key(self, namespace: str, name: str) -> str:
        return self.children_prefix("view", namespace) + self._pad(name, self.view_max, "view")

    def object_key(self, kind: str, namespace: str, name: str | None = None) -> str:
        """Key of a namespace (name None), table or view."""
        return self.encode(ObjectKey(kind, namespace, name))

    def object_keys(self, namespace: str, name: str, *, remember: bool = False) -> dict[str, str]:
        """The key of `namespace.name` as each object kind ("table", "view") it can be.

        Table and view names may have different maxima: a name longer than one kind's
        maximum can only be the other kind, so that kind is left out instead of making
        every lookup of the name fail. InvalidNameError when it can be neither.
        `remember`: keep the answer for the next call (up to OBJECT_KEYS_MEMO names, plain
        str only): for path lookups, which ask again for the same names; writes and bulk
        loads, which ask once per name, leave it off so the memo stays theirs.
        """
        plain = remember and type(namespace) is str and type(name) is str
        if plain:
            known = self._object_keys.get((namespace, name))
            if known is not None:
                return dict(known)
        keys: dict[str, str] = {}
        refusal: InvalidNameError | None = None
        for kind in ("table", "view"):
            try:
                keys[kind] = self.object_key(kind, namespace, name)
            except InvalidNameError as exc:
                refusal = refusal or exc
        if refusal is not None and not keys:
            raise refusal
        if plain:
            if len(self._object_keys) >= OBJECT_KEYS_MEMO:
                self._object_keys.clear()  # a crude bound; hit rates stay high in practice
            self._object_keys[namespace, name] = dict(keys)
        return keys

    def encode(self, key: ObjectKey) -> str:
        if not isinstance(key, ObjectKey):
            raise InvalidArgumentError(f"expected an ObjectKey, got {key!r}")
        if key.kind == "namespace":
            return self.namespace_key(key.namespace)
        assert key.name is not None  # guaranteed by ObjectKey
        return self.children_prefix(key.kind, key.namespace) + self._pad(
            key.name, self._name_max[key.kind], key.kind
        )

    def decode(self, key: str) -> ObjectKey:
        """Parse an object key; raises InvalidArgumentError if it is not one of this codec."""
        if not isinstance(key, str):
            raise InvalidArgumentError(f"object key must be a str, got {key!r}")
        kind = _PREFIX_KIND.get(key[:_TYPE_ID_SIZE])
        if kind is None:
            raise InvalidArgumentError(
                f"not an object key: {key!r} does not start with a namespace, table or view "
                f"type prefix ({', '.join(_PREFIX_KIND)})"
            )
        try:
            body = key[_TYPE_ID_SIZE:].encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgumentError(f"object key {key!r} is not valid UTF-8") from None
        name_max = 0 if kind == "namespace" else self._name_max[kind]
        expected = self.namespace_max + name_max
        if len(body) != expected:
            raise InvalidArgumentError(
                f"{kind} key {key!r} has {len(body)} name bytes, expected {expected} "
                f"(namespace max {self.namespace_max}"
                + ("" if kind == "namespace" else f" + {kind} max {name_max}")
                + ")"
            )
        namespace = self._unpad(key, body[: self.namespace_max], self.namespace_max, "namespace")
        if kind == "namespace":
            return ObjectKey(kind, namespace)
        name = self._unpad(key, body[self.namespace_max :], name_max, kind)
        return ObjectKey(kind, namespace, name)

    def decode_names(self, kind: str, namespace: str, keys: list[str]) -> list[str]:
        """Names of `keys`, all keys of `kind` in `namespace` (a listing), decoded and
        checked in bulk (`_bulk_names`). Any key the bulk checks cannot vouch for sends
        the list through `decode`, which raises the precise error."""
        prefix = self.children_prefix(kind, namespace)
        names = _bulk_names(keys, prefix, len(prefix) + self._name_max[kind])
        if names is not None:
            return names
        out = []
        for key in keys:
            decoded = self.decode(key)
            if decoded.kind != kind or decoded.namespace != namespace or decoded.name is None:
                raise InvalidArgumentError(
                    f"key {key!r} is not a {kind} key of namespace {namespace!r}"
                )
            out.append(decoded.name)
        return out

    def decode_namespaces(self, keys: list[str]) -> list[str]:
        """Namespace names of `keys`, all namespace keys (a listing), decoded and checked
        in bulk like `decode_names`; otherwise key by key through `decode`."""
        prefix = _KIND_PREFIX["namespace"]
        names = _bulk_names(keys, prefix, len(prefix) + self.namespace_max)
        if names is not None:
            return names
        out = []
        for key in keys:
            decoded = self.decode(key)
            if decoded.kind != "namespace":
                raise InvalidArgumentError(f"key {key!r} is not a namespace key")
            out.append(decoded.namespace)
        return out

    def bulk_decode(
        self, kind: str, keys: list[str]
    ) -> tuple[list[str], list[str] | list[None]] | None:
        """(namespaces, names) of `keys`, all keys of `kind` in any namespaces (a scan of
        the kind; names None for namespaces), checked in a few C-speed passes like
        `decode_names`; None when any key is not plainly such a key with valid ASCII
        names: the caller then decodes key by key (`decode`) for the precise error."""
        prefix = _KIND_PREFIX[_check_kind(kind)]
        if kind == "namespace":
            found = _bulk_names(keys, prefix, len(prefix) + self.namespace_max)
            return None if found is None else (found, [None] * len(found))
        split = len(prefix) + self.namespace_max
        size = split + self._name_max[kind]
        namespaces = list(
            map(str.rstrip, map(operator.itemgetter(slice(len(prefix), split)), keys))
        )
        names = list(map(str.rstrip, map(operator.itemgetter(slice(split, None)), keys)))
        if (
            _plain_ascii(keys)
            and set(map(len, keys)) <= {size}
            and all(map(str.startswith, keys, itertools.repeat(prefix)))
            and "" not in namespaces
            and "" not in names
            and _FORBIDDEN_IN_NAME.search("".join(namespaces)) is None
            and _FORBIDDEN_IN_NAME.search("".join(names)) is None
        ):
            return namespaces, names
        return None

    @staticmethod
    def _unpad(key: str, padded: bytes, max_bytes: int, kind: str) -> str:
        try:
            # A well-formed key never splits a character at a field boundary.
            name = padded.decode("utf-8").rstrip(" ")
            return validate_name(name, max_bytes, kind)
        except (UnicodeDecodeError, InvalidNameError) as exc:
            raise InvalidArgumentError(f"malformed object key {key!r}: {exc}") from None

    def children_prefix(self, kind: str, namespace: str) -> str:
        """Prefix shared by every key of `kind` ("table" or "view") in `namespace`."""
        if _check_kind(kind) == "namespace":
            raise InvalidArgumentError(
                "namespaces hold no namespaces; use namespace_key() or kind_prefix('namespace')"
            )
        return _KIND_PREFIX[kind] + self._pad(namespace, self.namespace_max, "namespace")

    @staticmethod
    def kind_prefix(kind: str) -> str:
        """Prefix shared by every key of `kind`, e.g. "B===" for namespaces."""
        return _KIND_PREFIX[_check_kind(kind)]
