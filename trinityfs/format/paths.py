"""Relative file locations under the lakehouse root (FORMAT.md section 1).

Every stored location is relative to the directory of the root node file being read;
`validate_location` is the gate that keeps a hostile catalog from pointing a reader
outside that directory.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterator

import mmh3

from trinityfs.errors import InvalidArgumentError, InvalidNameError, UnsafeLocationError
from trinityfs.format.integrity import content_uuid, content_uuids, has_content_name
from trinityfs.format.names import validate_name

LATEST_HINT = "_latest_hint.txt"
OLDEST_VERSION = "_oldest_version.txt"
ROOT_NODE_SUFFIX = ".arrow"
EXPORTS_DIR = "_exports"

_VERSION_BITS = 64
_ROOT_NODE_RE = re.compile(r"_([01]{64})\.arrow")

# (rule broken, regex finding it). Every regex is valid for both Python `re` and RE2, so
# the node file decoder can check whole Arrow columns at once with pyarrow.compute.
_UNSAFE_RULES = (
    ("is empty", r"^$"),
    ("is absolute (starts with '/')", r"^/"),
    ("has a URL scheme or drive prefix", r"://|^[A-Za-z][A-Za-z0-9+.\-]*:"),
    ("contains '::' (fsspec URL chaining)", r"::"),
    ("contains a backslash", r"\\"),
    ("contains a control character", r"[\x00-\x1f\x7f]"),
    ("has a '.' or '..' segment", r"(?:^|/)\.\.?(?:/|$)"),
    ("has an empty segment ('//' or a trailing '/')", r"//|/$"),
    ("starts with '~' (home directory expansion)", r"^~"),
    ("contains a character that storage layers interpret (* ? [ ] # %)", r"[*?\[\]#%]"),
)
UNSAFE_LOCATION_PATTERN = "|".join(f"(?:{regex})" for _, regex in _UNSAFE_RULES)
_UNSAFE_RE = re.compile(UNSAFE_LOCATION_PATTERN)
_UNSAFE_RULES_RE = tuple((rule, re.compile(regex)) for rule, regex in _UNSAFE_RULES)
# A strict subset of the safe locations (every file name trinityfs writes is in it),
# checked first because one anchored character-class match is far cheaper.
_SEGMENT = r"[A-Za-z0-9_\-][A-Za-z0-9_.\-+=,@]*"
_SAFE_FAST_RE = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")


# Many locations joined by newlines (a character no safe location holds), all in the
# fast-checked subset: what the per-location fast check means for the whole list (the
# reference `all_plainly_safe` is tested against).
_SAFE_FAST_LINES_RE = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*(?:\n{_SEGMENT}(?:/{_SEGMENT})*)*")
# The same test in passes that run at memory speed (the regex above takes ~0.3 us per
# location of ~90 bytes, once per node file decoded): the locations joined by '/' (so
# each boundary is one more separator), every byte in the subset's alphabet, and no
# segment that is empty or starts with one of `.+=,@` (a '/' first, last, or followed
# by '/' or one of them; the first byte not one of them).
_SAFE_FAST_BYTES = (string.ascii_letters + string.digits + "_-.+=,@/").encode("ascii")
_BAD_SEGMENT_START = re.compile(rb"/[/.+=,@]")
_BAD_FIRST_BYTES = b"/.+=,@"


def all_plainly_safe(locations: list[str]) -> bool:
    """True when every location (str) is in the safe subset trinityfs writes, checked in
    a few passes over the joined list; False says nothing (check each with
    `unsafe_location_problem`)."""
    joined = "/".join(locations)
    if not joined or not joined.isascii():
        return False
    data = joined.encode("ascii")
    if data.translate(None, _SAFE_FAST_BYTES):
        return False  # a byte outside the subset's alphabet (a newline, a space, ...)
    return (
        data[0] not in _BAD_FIRST_BYTES
        and data[-1] != 0x2F  # '/'
        and _BAD_SEGMENT_START.search(data) is None
    )


def unsafe_location_problem(loc: object) -> str | None:
    """Why `loc` is not a safe stored location, or None if it is safe."""
    if not isinstance(loc, str):
        return f"location must be a str, got {type(loc).__name__}"
    if _SAFE_FAST_RE.fullmatch(loc) is not None:
        return None
    if _UNSAFE_RE.search(loc) is not None:
        rule = next(rule for rule, regex in _UNSAFE_RULES_RE if regex.search(loc))
        return f"unsafe location {loc!r}: {rule}"
    if not loc.isascii():
        try:
            loc.encode("utf-8")
        except UnicodeEncodeError:
            return f"unsafe location {loc!r}: is not valid UTF-8"
    return None


def validate_location(loc: str) -> str:
    """Return `loc` unchanged if it is a safe relative location; else UnsafeLocationError.

    Rejected: empty, absolute, any scheme or drive, '::', backslash, control characters,
    '.', '..' or empty segments, a leading '~', and the characters * ? [ ] # % that
    fsspec globbing or URL parsing would interpret.
    """
    problem = unsafe_location_problem(loc)
    if problem is not None:
        raise UnsafeLocationError(loc if isinstance(loc, str) else repr(loc), problem)
    return loc


def optimized_path(name: str) -> str:
    """Spread `name` over 2^20 prefixes: MurmurHash3 x86_32 (seed 0) low 20 bits, 4/4/4/8."""
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"file name must be a non-empty str, got {name!r}")
    bits = format(mmh3.hash(name.encode("utf-8"), 0, signed=False) & 0xFFFFF, "020b")
    return f"{bits[0:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:20]}-{name}"


def check_version(version: object) -> int:
    """`version` if it is a version number: an int (not a bool, not 1.0) in 0..2^64-1;
    InvalidArgumentError naming it otherwise."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidArgumentError(f"version must be an int, got {version!r}")
    if not 0 <= version < 1 << _VERSION_BITS:
        raise InvalidArgumentError(f"version {version} is outside 0..2^64-1")
    return version


def root_node_file(version: int) -> str:
    """Root node file of `version`: '_' + 64 binary digits, least significant first."""
    check_version(version)
    return "_" + format(version, "064b")[::-1] + ROOT_NODE_SUFFIX


def parse_root_node_file(name: str) -> int | None:
    """Version of a root node file name (no directories), or None for any other name."""
    if not isinstance(name, str):
        return None
    match = _ROOT_NODE_RE.fullmatch(name)
    return int(match.group(1)[::-1], 2) if match else None


# Names inside new definition file names are informational only (readers never parse
# them), so anything a store might interpret becomes '_' and each part is capped to keep
# the file name well under the usual 255-byte limit even for 10,000-byte object names.
_LABEL_SAFE = frozenset(string.ascii_letters + string.digits + "._-~+=,@")
_LABEL_MAX_BYTES = 64
_TOKEN_MAX_BYTES = 200
_TOKEN_FORBIDDEN = frozenset("/\\:*?[]#%")


def _label(part: str, what: str) -> str:
    if not isinstance(part, str) or not part:
        raise InvalidArgumentError(f"{what} must be a non-empty str, got {part!r}")
    safe = "".join(c if c in _LABEL_SAFE or (c > "\x7f" and c.isprintable()) else "_" for c in part)
    return safe.encode("utf-8")[:_LABEL_MAX_BYTES].decode("utf-8", "ignore")


def _token(value: str, kind: str) -> str:
    """Check a name that becomes part of a file name verbatim (must stay unambiguous)."""
    validate_name(value, _TOKEN_MAX_BYTES, kind)
    bad = sorted(_TOKEN_FORBIDDEN.intersection(value))
    if bad:
        raise InvalidNameError(
            f"invalid {kind} {value!r}: contains {' '.join(bad)}, which may not appear "
            f"in {'an' if kind[0] in 'aeiou' else 'a'} {kind} "
            f"(one of {' '.join(sorted(_TOKEN_FORBIDDEN))})"
        )
    if value in (".", ".."):
        raise InvalidNameError(f"invalid {kind} {value!r}: may not be '.' or '..'")
    return value


def _content(data: bytes) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidArgumentError(
            f"a new file name derives from the file's bytes; got {type(data).__name__}"
        )
    return bytes(data)


def new_node_location(data: bytes) -> str:
    """A fresh location for a non-root node file holding `data` (content-hash name)."""
    return optimized_path(f"node-{content_uuid(_content(data))}.arrow")


def new_definition_location(kind: str, ns: str, name: str | None, data: bytes) -> str:
    """A fresh location for a namespace (name None), table or view definition file
    holding `data` (content-hash name)."""
    return next(definition_locations(kind, ns, name, data))


def definition_locations(kind: str, ns: str, name: str | None, data: bytes) -> Iterator[str]:
    """Fresh locations for one definition file holding `data`, endlessly: the same name
    but for the random bits of its UUID, so each falls in an independent optimized-path
    directory (a writer may take the one that is cheapest to create; docs/FORMAT-CHOICES.md
    "Definition placement")."""
    if kind == "namespace":
        if name is not None:
            raise InvalidArgumentError("a namespace definition location takes no object name")
        head = f"namespace-{_label(ns, 'namespace')}-"
    elif kind in ("table", "view"):
        if name is None:
            raise InvalidArgumentError(f"a {kind} definition location needs the {kind} name")
        head = f"{kind}-{_label(ns, 'namespace')}-{_label(name, kind)}-"
    else:
        raise InvalidArgumentError(
            f"unknown definition kind {kind!r}; expected namespace, table or view"
        )
    names = content_uuids(_content(data))
    yield validate_location(optimized_path(f"{head}{next(names)}.binpb"))
    for unique in names:  # the same checked text but for hex digits: the same verdict
        yield optimized_path(f"{head}{unique}.binpb")


# An optimized definition path's file name: the 8 hash bits, then the kind (FORMAT.md
# section 1: `<kind>-<ns>[-<name>]-<uuid4>.binpb`).
_DEFINITION_NAME_RE = re.compile(r"(?:^|/)[01]{8}-(namespace|table|view)-[^/]*\.binpb$")
_DEFINITION_CLASSES = {"NamespaceDef": "namespace", "TableDef": "table", "ViewDef": "view"}


def definition_kind_problem(location: str, message_type: str) -> str | None:
    """Why the definition file at `location` cannot hold a `message_type` message (its
    name says another kind: a pointer to another object's definition), or None.

    Locations that are not optimized definition paths (a lakehouse definition, a
    description in a message) are not judged."""
    wanted = _DEFINITION_CLASSES.get(message_type)
    found = _DEFINITION_NAME_RE.search(location)
    if wanted is None or found is None or found.group(1) == wanted:
        return None
    return (
        f"is a {found.group(1)} definition file (by its name), read as a {wanted}'s: "
        "a pointer to another object's definition"
    )


def definition_owner_problem(location: str, kind: str, ns: str, name: str | None) -> str | None:
    """Why the definition file at `location` is not one of object `kind` `ns`.`name`
    (None for a namespace), or None.

    The kind is checked for every optimized definition path (FORMAT.md names them so).
    The namespace and object name only for names trinityfs wrote (a content-hash UUID:
    their name part is always `definition_locations'`), since other writers may spell
    names in file names differently. A pure function of its arguments, so answers are
    kept (readers ask it on every definition they read)."""
    return _owner_problem(location, kind, ns, name)


@functools.lru_cache(maxsize=4096)
def _owner_problem(location: str, kind: str, ns: str, name: str | None) -> str | None:
    found = _DEFINITION_NAME_RE.search(location)
    if found is None:
        return None  # not an optimized definition path: not judged
    problem = definition_kind_problem(location, _KIND_CLASSES.get(kind, ""))
    if problem is not None:
        return problem
    head = f"{kind}-{_label(ns, 'namespace')}-"
    if name is not None:
        head += f"{_label(name, kind)}-"
    if location.rpartition("/")[2][9:].startswith(head) or not has_content_name(location):
        return None
    return (
        f"is not a definition file of {kind} {ns if name is None else f'{ns}.{name}'} "
        f"(its name should start with {head!r} after the hash prefix): a pointer to "
        "another object's definition"
    )


_KIND_CLASSES = {kind: cls for cls, kind in _DEFINITION_CLASSES.items()}


def new_lakehouse_def_location(data: bytes) -> str:
    """A fresh location for a lakehouse definition file holding `data` (not optimized)."""
    return f"_lakehouse_def_{content_uuid(_content(data))}.binpb"


def transaction_location(txn_id: str) -> str:
    """The location of distributed transaction `txn_id` (derived, so loadable by id)."""
    return validate_location(optimized_path(f"txn-{_token(txn_id, 'transaction id')}.binpb"))


def export_root_location(name: str) -> str:
    """Where a minimal export named `name` keeps its copy of the root node."""
    return validate_location(f"_export_{_token(name, 'export name')}{ROOT_NODE_SUFFIX}")


def full_export_prefix(name: str) -> str:
    """Directory (ending in '/') holding the standalone lakehouse of full export `name`."""
    return validate_location(f"{EXPORTS_DIR}/{_token(name, 'export name')}") + "/"
