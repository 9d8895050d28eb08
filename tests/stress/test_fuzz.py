"""Hostile input, fuzzed with Hypothesis: names, JSON definitions, version numbers and
times, and the contents of node, definition, lakehouse definition and hint files.

Whatever the input, every catalog operation either works or raises a typed error (a
`TrinityError`), within a time limit (no hang), and no file outside the lakehouse root
is opened or listed: an audit hook watches every ``open`` and directory listing of the
process while trinityfs runs, and bait files just outside the root (a valid lakehouse
definition, a valid node, a valid table definition) would be read if a location
escaped. Files fuzzed into a version never change what earlier versions read, and a
malformed hint never makes a reader skip a version or commit over one.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import uuid
import zoneinfo
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from figures import count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lake_fixtures import SMALL_TREE
from lakecheck import read_state

import trinityfs.storage.localdirs as local_storage  # the local backend's walk
from trinityfs import Lakehouse
from trinityfs.errors import TrinityError
from trinityfs.format.definitions import encode_definition, new_lakehouse_def
from trinityfs.format.node_decode import decode_node
from trinityfs.format.nodefile import COLUMNS, SCHEMA
from trinityfs.format.paths import LATEST_HINT, root_node_file
from trinityfs.format.trinitylake_pb2 import NamespaceDef, TableDef, ViewDef

pytestmark = pytest.mark.stress

HANG_SECONDS = 20
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


# ---------------------------------------------------------------------------- guards


class Hang(BaseException):
    """Raised by the alarm when an operation runs longer than HANG_SECONDS."""


class Watch:
    """Every path the process opens or lists while `active`, outside the allowed ones.

    The audit hook sees path-based opens and listings. Opens relative to a directory
    descriptor (`os.open(name, dir_fd=...)`, openat2 through ctypes) name no full path
    in their audit event, so `guarded` also wraps `os.open` and the storage layer's
    openat2 and checks what each new descriptor really points at (/proc/self/fd)."""

    def __init__(self) -> None:
        self.active = False
        self.allowed: tuple[str, ...] = ()
        self.escapes: list[str] = []

    def check(self, path: str) -> None:
        full = os.path.realpath(path)
        if not (full + os.sep).startswith(self.allowed):
            self.escapes.append(full)

    def check_fd(self, fd: int) -> None:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        if target.startswith("/"):  # not a pipe or socket
            self.check(target.removesuffix(" (deleted)"))

    def hook(self, event: str, args: tuple) -> None:
        if not self.active or event not in ("open", "os.listdir", "os.scandir"):
            return
        path = args[0] if args else None
        if path is None:
            return
        if isinstance(path, int):
            self.check_fd(path)
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        self.check(os.fspath(path))


WATCH = Watch()
sys.addaudithook(WATCH.hook)
_REAL_OS_OPEN = os.open


def _watched_os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
    fd = _REAL_OS_OPEN(path, flags, mode, dir_fd=dir_fd)
    if WATCH.active:
        WATCH.check_fd(fd)
    return fd


class _WatchedOpenAt2:
    """The storage layer's openat2, with every descriptor it returns checked."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def enabled(self) -> bool:
        return self.inner.enabled

    def open(self, dir_fd: int, path: str, flags: int) -> int:
        fd = self.inner.open(dir_fd, path, flags)
        if fd >= 0 and WATCH.active:
            WATCH.check_fd(fd)
        return fd


@contextmanager
def guarded(root: Path) -> Iterator[None]:
    """No hang, no file opened or listed outside `root` (and Python's own files)."""
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, *(p for p in sys.path if p)}
    python |= set(zoneinfo.TZPATH)  # time zone data, read once per process when first used
    dirs = [os.path.realpath(p) + os.sep for p in (str(root), *python) if os.path.isdir(p)]
    WATCH.allowed = (*dirs, "/dev/urandom", "/proc/self/", "/sys/fs/cgroup/")
    WATCH.escapes = []

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"an operation ran longer than {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    openat2 = local_storage._OPENAT2
    os.open = _watched_os_open
    local_storage._OPENAT2 = _WatchedOpenAt2(openat2)
    WATCH.active = True
    try:
        yield
    finally:
        WATCH.active = False
        os.open = _REAL_OS_OPEN
        local_storage._OPENAT2 = openat2
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not WATCH.escapes, f"opened or listed outside the root: {WATCH.escapes[:5]}"


def test_the_watch_sees_escapes(tmp_path, monkeypatch) -> None:
    """The guard itself: opening or listing outside the root is caught."""
    (tmp_path / "inside").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("bait")
    with pytest.raises(AssertionError, match="outside the root"), guarded(tmp_path / "inside"):
        outside.read_text()
    with pytest.raises(AssertionError, match="outside the root"), guarded(tmp_path / "inside"):
        os.listdir(tmp_path)
    inside = os.open(tmp_path / "inside", os.O_RDONLY | os.O_DIRECTORY)
    above = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # relative to a directory descriptor: the audit event names only "outside.txt",
        # which read against the working directory would be a file inside
        monkeypatch.chdir(tmp_path / "inside")
        with pytest.raises(AssertionError, match="outside the root"), guarded(tmp_path / "inside"):
            os.close(os.open("outside.txt", os.O_RDONLY, dir_fd=above))
        with pytest.raises(AssertionError, match="outside the root"), guarded(tmp_path / "inside"):
            os.close(os.open("../outside.txt", os.O_RDONLY, dir_fd=inside))
        with pytest.raises(AssertionError, match="outside the root"), guarded(tmp_path / "inside"):
            os.listdir(above)
        if local_storage._OPENAT2.enabled:  # the storage layer's own openat2
            escape = pytest.raises(AssertionError, match="outside the root")
            with escape, guarded(tmp_path / "inside"):
                fd = local_storage._OPENAT2.open(above, "outside.txt", os.O_RDONLY)
                assert fd >= 0
                os.close(fd)
    finally:
        os.close(inside)
        os.close(above)
    with guarded(tmp_path / "inside"):
        (tmp_path / "inside" / "x").write_text("fine")


def typed(step: Callable[[], Any]) -> tuple[str, Any]:
    """Run one operation: ("ok", result) or ("error", the TrinityError); anything else
    (an untyped exception) fails the test."""
    try:
        return "ok", step()
    except TrinityError as exc:
        return "error", exc


# ---------------------------------------------------------------------------- the lake


@dataclass
class Lake:
    """A lakehouse to attack, with bait just outside its root."""

    root: Path
    latest: int
    states: dict[int, Any]
    table_def: str  # location of ns a, table t1's definition
    ldef: str  # location of the lakehouse definition
    node: str | None  # a non-root node file of the latest version
    root_bytes: bytes  # root node file of the latest version

    @property
    def url(self) -> str:
        return str(self.root)

    def restore(self) -> None:
        """Remove every root above `latest`, rewrite the hint."""
        v = self.latest + 1
        while (self.root / root_node_file(v)).exists():
            (self.root / root_node_file(v)).unlink()
            v += 1
        (self.root / LATEST_HINT).write_text(str(self.latest))


BAIT = {
    "outside.binpb": encode_definition(new_lakehouse_def()),
    "outside-table.binpb": encode_definition(TableDef(id="bait")),
}
ESCAPES = [
    "../outside.binpb",
    "../outside-table.binpb",
    "../outside-node.arrow",
    "a/../../outside.binpb",
    "/etc/passwd",
    "//etc/passwd",
    "~/outside.binpb",
    "file:///etc/passwd",
    "s3://bucket/key",
    "memory://x",
    "C:\\outside",
    "..\\outside.binpb",
    "%2e%2e/outside.binpb",
    "./_latest_hint.txt",
    "a//b",
    "a/",
    "x::file://y",
    "*.binpb",
    "\x00",
    "",
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    box = tmp_path_factory.mktemp("fuzz")
    root = box / "lake"
    lakehouse = Lakehouse.create(str(root), **SMALL_TREE)
    with lakehouse.transaction() as t:
        t.create_namespace("a", {"k": "v"})
        t.create_namespace("b")
    for i in range(8):
        lakehouse.create_table("a", f"t{i}", {"properties": {"i": str(i)}})
    lakehouse.create_view("b", "v", {"properties": {"sql": "select 1"}})
    latest = lakehouse.latest_version()
    for name, data in BAIT.items():
        (box / name).write_bytes(data)
    root_bytes = (root / root_node_file(latest)).read_bytes()
    rootfile = decode_node(root_bytes, None, "root")
    shutil.copy(
        root / (rootfile.children or [root_node_file(latest)])[0], box / "outside-node.arrow"
    )
    return Lake(
        root=root,
        latest=latest,
        states={v: read_state(lakehouse.at(v)) for v in range(latest + 1)},
        table_def=lakehouse.snapshot().object_location("table", "a", "t1"),
        ldef=rootfile.system["lakehouse_def"],
        node=(rootfile.children or [None])[0],
        root_bytes=root_bytes,
    )


def exercise(url: str, commit: bool = True) -> dict[str, str]:
    """Every read (and one commit) on a fresh handle; each step typed or ok."""
    outcomes: dict[str, str] = {}
    opened = typed(lambda: Lakehouse.open(url))
    outcomes["open"] = opened[0]
    if opened[0] != "ok":
        return outcomes
    lh: Lakehouse = opened[1]
    latest = typed(lh.latest_version)
    outcomes["latest"] = latest[0]
    steps: dict[str, Callable[[], Any]] = {
        "snapshot": lambda: read_state(lh.snapshot()),
        "versions": lh.versions,
        "check": lh.check,
        "describe": lambda: lh.describe_table("a", "t1"),
        "list": lambda: lh.list_tables("a"),
        "changes": lambda: lh.changes(lh.latest_version()),
        "diff": lambda: lh.diff(0, lh.latest_version()),
        "version_at": lambda: lh.version_at(2**62),
    }
    if commit:
        steps["commit"] = lambda: lh.create_table("b", f"n{uuid.uuid4().hex[:8]}")
    for name, step in steps.items():
        outcomes[name] = typed(step)[0]
    return outcomes


def earlier_versions_intact(lake: Lake) -> None:
    fresh = Lakehouse(Lakehouse.open(lake.url).storage)
    for v, state in lake.states.items():
        assert read_state(fresh.at(v)) == state, f"version {v} changed"


# ---------------------------------------------------------------------------- node files


def raw_node(rows: list[tuple[Any, Any, Any, Any]], schema: pa.Schema = SCHEMA) -> bytes:
    """An Arrow IPC file with these rows, no validation at all."""
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    table = pa.table(
        {f.name: pa.array(list(col), type=f.type) for f, col in zip(schema, columns, strict=True)},
        schema=schema,
    )
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def node_rows(node_bytes: bytes) -> list[tuple[Any, Any, Any, Any]]:
    table = pa.ipc.open_file(pa.py_buffer(node_bytes)).read_all()
    return list(zip(*(table.column(c).to_pylist() for c in COLUMNS), strict=True))


texts = st.text(max_size=30)
locations = st.one_of(st.sampled_from(ESCAPES), texts)
cells = st.one_of(
    st.none(),
    st.sampled_from(["lakehouse_def", "previous_root", "n_keys", "created_at_millis"]),
    st.sampled_from(["0", "1", "3", "-1", "1e3", str(2**64), str(2**63 - 1), " 2"]),
    locations,
)


@st.composite
def hostile_node_bytes(draw, valid: bytes) -> bytes:
    kind = draw(st.sampled_from(["random", "truncated", "bitflip", "rows", "mutated", "schema"]))
    if kind == "random":
        return draw(st.binary(max_size=3000))
    if kind == "truncated":
        return valid[: draw(st.integers(0, len(valid) - 1))]
    if kind == "bitflip":
        data = bytearray(valid)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "rows":  # the right schema, rows from a hostile vocabulary
        rows = draw(st.lists(st.tuples(cells, cells, cells, cells), max_size=30))
        return raw_node(rows)
    if kind == "mutated":  # a valid node with one cell replaced
        rows = [list(r) for r in node_rows(valid)]
        r = draw(st.integers(0, len(rows) - 1))
        c = draw(st.integers(0, 3))
        rows[r][c] = draw(cells)
        if draw(st.booleans()):
            del rows[draw(st.integers(0, len(rows) - 1))]
        return raw_node([tuple(r) for r in rows])
    types = [pa.string(), pa.large_string(), pa.int64(), pa.binary()]
    names = draw(
        st.lists(st.sampled_from([*COLUMNS, "extra"]), min_size=1, max_size=5, unique=True)
    )
    schema = pa.schema([pa.field(n, draw(st.sampled_from(types))) for n in names])
    n = draw(st.integers(0, 12))
    rows = [tuple(None for _ in names) for _ in range(n)]
    return raw_node(rows, schema)


@FUZZ
@given(data=st.data())
def test_hostile_root_node(lake: Lake, data) -> None:
    """A foreign writer's garbage as the next version's root."""
    blob = data.draw(hostile_node_bytes(lake.root_bytes))
    count("root node files")
    target = lake.root / root_node_file(lake.latest + 1)
    try:
        target.write_bytes(blob)
        with guarded(lake.root):
            outcomes = exercise(lake.url)
            earlier_versions_intact(lake)
        assert outcomes["latest"] == "ok"
    finally:
        lake.restore()


@FUZZ
@given(data=st.data())
def test_hostile_inner_node(lake: Lake, data) -> None:
    """An existing node file of the latest version overwritten with garbage."""
    assert lake.node is not None
    path = lake.root / lake.node
    original = path.read_bytes()
    blob = data.draw(hostile_node_bytes(original))
    count("inner node files")
    try:
        path.write_bytes(blob)
        with guarded(lake.root):
            exercise(lake.url)
    finally:
        path.write_bytes(original)
        lake.restore()


@pytest.mark.parametrize("where", ["lakehouse_def", "previous_root", "value", "child", "buffer"])
@pytest.mark.parametrize("location", ESCAPES)
def test_locations_that_escape_the_root(lake: Lake, where: str, location: str) -> None:
    """Every stored location kind, pointing outside (bait is there): refused, typed."""
    count("escaping locations")
    rows = [list(r) for r in node_rows(lake.root_bytes)]
    system_end = next(i for i, r in enumerate(rows) if r[0] is None and r[1] is None)
    if where in ("lakehouse_def", "previous_root"):
        row = next(r for r in rows[:system_end] if r[0] == where)
        row[1] = location
    elif where == "value":
        rows[system_end + 1][1] = location
    elif where == "child":
        rows[system_end][2] = location
    else:
        rows.append(["C===a" + " " * 15 + "zz", location, None, str(lake.latest + 1)])
    if where != "previous_root":
        prev = next(r for r in rows[:system_end] if r[0] == "previous_root")
        prev[1] = root_node_file(lake.latest)
    target = lake.root / root_node_file(lake.latest + 1)
    try:
        target.write_bytes(raw_node([tuple(r) for r in rows]))
        with guarded(lake.root):
            outcomes = exercise(lake.url)
            earlier_versions_intact(lake)
        assert outcomes["snapshot"] == "error" or outcomes["check"] == "error"
    finally:
        lake.restore()


def test_huge_node_files(lake: Lake) -> None:
    """Huge values, many rows, a huge buffer: typed errors or results, in bounded time.

    (No commit on top: a root with 200,000 buffered messages is readable, and a commit
    on it would rightly flush them all into a tree of order 4, which takes a while.)"""
    rows = node_rows(lake.root_bytes)
    huge = [
        raw_node([*rows, *[("C===zz" + str(i), "x" * 64, None, "1") for i in range(200_000)]]),
        raw_node([(r[0], r[1] + "y" * 5_000_000 if r[1] else r[1], r[2], r[3]) for r in rows]),
        raw_node([("k" * 8_000_000, "v", None, None)]),
        os.urandom(16 * 2**20),
    ]
    target = lake.root / root_node_file(lake.latest + 1)
    for blob in huge:
        count("huge files")
        try:
            target.write_bytes(blob)
            with guarded(lake.root):
                exercise(lake.url, commit=False)
                earlier_versions_intact(lake)
        finally:
            lake.restore()


# ---------------------------------------------------------------------------- definitions


def definition_bytes(valid: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=2000),
        st.integers(0, max(0, len(valid) - 1)).map(lambda n: valid[:n]),
        st.sampled_from(
            [
                encode_definition(new_lakehouse_def()),
                encode_definition(NamespaceDef(id="x", properties={"a": "b"})),
                encode_definition(ViewDef(id="v", substrait_read_rel=os.urandom(64))),
                b"\x0a\xff\xff\xff\xff\x0f",  # a length prefix far beyond the file
                b"\x08" * 5000,
                os.urandom(2**20),
            ]
        ),
    )


@FUZZ
@given(data=st.data())
def test_hostile_table_definition(lake: Lake, data) -> None:
    path = lake.root / lake.table_def
    original = path.read_bytes()
    blob = data.draw(definition_bytes(original))
    count("definition files")
    try:
        path.write_bytes(blob)
        with guarded(lake.root):
            outcomes = exercise(lake.url)
        assert outcomes["list"] == "ok"  # listing reads no definition
    finally:
        path.write_bytes(original)
        lake.restore()


@FUZZ
@given(data=st.data())
def test_hostile_lakehouse_definition(lake: Lake, data) -> None:
    path = lake.root / lake.ldef
    original = path.read_bytes()
    blob = data.draw(definition_bytes(original))
    count("lakehouse definition files")
    try:
        path.write_bytes(blob)
        with guarded(lake.root):
            exercise(lake.url)
    finally:
        path.write_bytes(original)
        lake.restore()


# ---------------------------------------------------------------------------- hints

hints = st.one_of(
    st.binary(max_size=40),
    st.integers(-(2**70), 2**70).map(lambda n: str(n).encode()),
    st.integers(0, 40).map(lambda n: str(n).encode()),
    st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"", b" 3 \n", b"3.0", b"0x3", "\u0663".encode(), b"+3", b"-0"]),
)


@FUZZ
@given(hint=hints)
def test_hostile_hint_never_skips_a_version(lake: Lake, hint: bytes) -> None:
    count("hint files")
    try:
        (lake.root / LATEST_HINT).write_bytes(hint)
        with guarded(lake.root):
            reader = Lakehouse.open(lake.url)
            assert reader.latest_version() == lake.latest
            assert [v.version for v in reader.versions()] == list(range(lake.latest + 1))
            (lake.root / LATEST_HINT).write_bytes(hint)
            assert Lakehouse.open(lake.url).create_table("b", "h") == lake.latest + 1
    finally:
        lake.restore()


# ---------------------------------------------------------------------------- API input

names = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
    st.sampled_from(["..", ".", "/", "a/b", "a\\b", "*", "%2F", "_latest_hint.txt", "x" * 17]),
    st.none(),
    st.integers(),
    st.binary(max_size=10),
)


@pytest.fixture
def fresh(tmp_path) -> Lake:
    root = tmp_path / "lake"
    lakehouse = Lakehouse.create(str(root), **SMALL_TREE)
    lakehouse.create_namespace("a")
    return Lake(root, 1, {}, "", "", None, b"")


@FUZZ
@given(ns=names, name=names)
def test_names(fresh: Lake, ns: Any, name: Any) -> None:
    count("names")
    with guarded(fresh.root):
        lh = Lakehouse.open(fresh.url)
        outcome, _ = typed(lambda: lh.create_namespace(ns))
        if outcome == "ok":
            assert ns in lh.list_namespaces()
            typed(lambda: lh.set_namespace_properties(ns, {"p": "q"}))
        for op in (lh.create_table, lh.create_view):
            target_ns = ns if outcome == "ok" else "a"
            made, _ = typed(lambda op=op, target_ns=target_ns: op(target_ns, name))
            if made == "ok":
                assert name in lh.list_tables(target_ns) + lh.list_views(target_ns)
                assert typed(lambda target_ns=target_ns: lh.at().object_kind(target_ns, name))
        typed(lambda: lh.describe_table("a", name))
        typed(lambda: lh.rename_table("a", name, "a", "renamed"))
        typed(lambda: lh.drop_table("a", name))
        typed(lambda: lh.drop_namespace(ns, cascade=True))
        lh.check()


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.text(max_size=10),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(
                    [
                        "id",
                        "schema",
                        "columns",
                        "name",
                        "type",
                        "nullable",
                        "properties",
                        "table_type",
                        "table_format",
                        "format_properties",
                        "primary_keys",
                        "struct_fields",
                        "list_element",
                        "map_key",
                        "schema_binding",
                        "substrait_read_rel",
                        "referenced_object_full_names",
                        "namespace_name",
                    ]
                ),
                st.text(max_size=8),
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=25,
)


@FUZZ
@given(definition=json_values, kind=st.sampled_from(["table", "view"]))
def test_json_definitions(fresh: Lake, definition: Any, kind: str) -> None:
    count("JSON definitions")
    with guarded(fresh.root):
        lh = Lakehouse.open(fresh.url)
        create = lh.create_table if kind == "table" else lh.create_view
        outcome, _ = typed(lambda: create("a", "t", definition))
        if outcome == "ok":
            described = lh.at().describe(kind, "a", "t")
            assert described.id  # an id is always given
            replace = lh.replace_table if kind == "table" else lh.replace_view
            typed(lambda: replace("a", "t", definition))
            assert lh.at().describe(kind, "a", "t").id == described.id
        lh.check()


@FUZZ
@given(
    version=st.one_of(
        st.integers(-(2**70), 2**70), st.booleans(), st.floats(), st.text(max_size=5)
    ),
    timestamp=st.one_of(
        st.integers(-(2**70), 2**70),
        st.datetimes(),
        st.datetimes(timezones=st.timezones()),
        st.floats(),
        st.text(max_size=5),
    ),
)
def test_versions_and_times(fresh: Lake, version: Any, timestamp: Any) -> None:
    count("versions and times")
    lh = Lakehouse.open(fresh.url)
    with guarded(fresh.root):
        typed(lambda: lh.at(version))
        typed(lambda: lh.at(timestamp=timestamp))
        typed(lambda: lh.version_info(version))
        typed(lambda: lh.diff(0, version))
        typed(lambda: lh.rollback(version))
    assert lh.latest_version() >= 1


@FUZZ
@given(
    options=st.dictionaries(
        st.sampled_from(
            [
                "order",
                "namespace_name_max_size_bytes",
                "table_name_max_size_bytes",
                "node_file_max_size_bytes",
                "txn_ttl_millis",
                "txn_isolation_level",
                "properties",
                "major_version",
                "bogus",
            ]
        ),
        json_values,
        max_size=4,
    )
)
def test_lakehouse_options(tmp_path, options: dict[str, Any]) -> None:
    count("lakehouse options")
    root = tmp_path / uuid.uuid4().hex
    with guarded(tmp_path):
        outcome, made = typed(lambda: Lakehouse.create(str(root), **options))
        if outcome == "ok":
            made.create_namespace("a")
            made.check()
