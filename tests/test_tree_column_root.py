"""A bulk load's root kept as Arrow columns, and the streaming merge of the next commit.

The commit after a bulk load merges the load's messages (kept in its root) into the tree
below, rebuilt bottom-up. It used to decode every message into Python objects first
(about 0.9 KB per message at the peak: 990 MiB at 1,000,000 tables); now the root's
buffer stays Arrow columns (`ColumnBuffer`) and streams into the builder, whose nodes
are written as they are cut. These tests check the results are those of the old path
and that the memory no longer grows with Python objects per message.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

import trinityfs.txn.roots as roots
from trinityfs import Lakehouse
from trinityfs.format.node_decode import BufferColumns
from trinityfs.format.nodefile import NodeFile
from trinityfs.tree import Node, TreeWriter, columns
from trinityfs.tree.budget import FlushPolicy, MessageBuffer
from trinityfs.tree.columns import ColumnBuffer

NAMESPACES = [f"ns{j:02d}" for j in range(5)]
REPO = Path(__file__).resolve().parents[1]


def spread(i: int) -> str:
    return hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8).hexdigest()


def bulk_lake(path: Path, n: int) -> None:
    lake = Lakehouse.create(str(path), storage_options={"fsync": False})
    with lake.bulk_load() as load:
        for ns in NAMESPACES:
            load.create_namespace(ns)
        for i in range(n):
            load.create_table(NAMESPACES[i % 5], spread(i), {"table_format": "ICEBERG"})


# -- ColumnBuffer answers like the dict it replaces --------------------------------


def _columns(rows: list[tuple[str, str | None, int]]) -> BufferColumns:
    keys, values, versions = zip(*rows, strict=True)
    return BufferColumns(
        pa.array(keys, pa.string()), pa.array(values, pa.string()), pa.array(versions, pa.uint64())
    )


def test_column_buffer_answers_every_read_like_a_message_buffer():
    rows = [(f"k{i:05d}", None if i % 7 == 0 else f"v/{i}.binpb", 3) for i in range(3000)]
    cols = _columns(rows)
    buffer = ColumnBuffer.from_columns(cols.keys, cols.values, cols.versions)
    twin = MessageBuffer((k, (v, t)) for k, v, t in rows)
    assert buffer is not None
    assert len(buffer) == len(twin) and bool(buffer)
    assert buffer.nbytes == twin.nbytes  # the flush policy's estimate, summed in Arrow
    assert list(buffer.items()) == list(twin.items())
    for key in ("k00000", "k00007", "k01500", "k02999", "k0", "k03000", "a", "z", ""):
        assert buffer.get(key) == twin.get(key)
        assert (key in buffer) == (key in twin)
    assert buffer.between("k00100", "k00120") == sorted(
        (k, m[0]) for k, m in twin.items() if "k00100" <= k < "k00120"
    )
    assert buffer.between("k02990", None)[-1] == ("k02999", "v/2999.binpb")
    with pytest.raises(KeyError):
        buffer["nope"]


@pytest.mark.parametrize("sample", [3, 4, 64])
@pytest.mark.parametrize("key_type", [pa.string(), pa.large_string()])
def test_column_buffer_finds_non_ascii_keys_in_a_sliced_column(key_type, sample, monkeypatch):
    monkeypatch.setattr(columns, "SAMPLE", sample)  # small samples: many boundaries
    # the key view compares UTF-8 bytes: their order must be the str order it replaces
    names = ["a", "a\u00e9", "ab", "b", "\u00e9", "\u00e9\u00e9", "z", "\u4e2d", "\U0001f600"]
    names = sorted(f"{n}{i:03d}" for n in names for i in range(40))
    rows = [(k, f"v/{i}.binpb", 2) for i, k in enumerate(names)]
    cols = _columns(rows)
    keys = cols.keys.cast(key_type).slice(7, 300)  # a column that starts inside its buffers
    buffer = ColumnBuffer.from_columns(keys, cols.values.slice(7, 300), cols.versions.slice(7, 300))
    twin = MessageBuffer((k, (v, t)) for k, v, t in rows[7:307])
    assert buffer is not None
    for key in [*names, "", "a", "\u00e9", "\u00e9\u00e90", "\uffff", "\U0001f600999"]:
        assert buffer.get(key) == twin.get(key), key
        assert (key in buffer) == (key in twin)
    for lo, hi in [(names[50], names[120]), ("", names[8]), (names[7], "\uffff"), ("b", "b")]:
        expected = sorted((k, m[0]) for k, m in twin.items() if lo <= k < hi)
        assert buffer.between(lo, hi) == expected, (lo, hi)


@pytest.mark.parametrize("sample", [2, 64])
def test_column_buffer_takes_a_lone_surrogate_key_in_code_point_order(sample, monkeypatch):
    monkeypatch.setattr(columns, "SAMPLE", sample)
    # U+D7FF < lone surrogates (U+D800-U+DFFF, never stored: not UTF-8) < U+E000
    names = sorted(f"{c}{i}" for c in ("a", "\ud7ff", "\ue000", "\uffff", "z") for i in range(5))
    rows = [(k, f"v/{i}.binpb", 2) for i, k in enumerate(names)]
    cols = _columns(rows)
    buffer = ColumnBuffer.from_columns(cols.keys, cols.values, cols.versions)
    twin = MessageBuffer((k, (v, t)) for k, v, t in rows)
    assert buffer is not None
    for key in ("\ud800", "\udfff", "\ud7ff\udc00", "a\ud800", "\ue000\udbff"):
        assert buffer.get(key) is None and key not in buffer, repr(key)
    bounds = ["", "\ud800", "\udfff0", "\ud7ff3\ud800", "\ue000", "a2\udc00", None]
    for lo in bounds[:-1]:
        for hi in bounds[1:]:
            expected = sorted(
                (k, m[0]) for k, m in twin.items() if lo <= k and (hi is None or k < hi)
            )
            assert buffer.between(lo, hi) == expected, (lo, hi)


def test_a_buffer_not_sorted_by_key_is_decoded_message_by_message():
    # a root written by several commits is ordered by (version, key), not by key
    rows = [("b", "v/b.binpb", 1), ("a", "v/a.binpb", 2), ("b", None, 2)]
    node = Node.from_file(NodeFile(buffer=_columns(rows)), None)
    assert isinstance(node.buffer, MessageBuffer)
    assert dict(node.buffer) == {"a": ("v/a.binpb", 2), "b": (None, 2)}


# -- the commit after a bulk load: same results as the old path ---------------------


def _tree_shape(lake: Lakehouse, version: int) -> list[tuple[int, list[str], int]]:
    """(depth, keys, buffered messages) of every node, depth first."""
    snap = lake.engine.snapshot(version)
    out = []
    stack = [(snap.root, 0)]
    while stack:
        node, depth = stack.pop()
        out.append((depth, list(node.keys), len(node.buffer)))
        for child in reversed(node.children or []):
            stack.append((snap.nodes.resolve(child), depth + 1))
    return out


def _cold_lookup_files(url: str, key_of: list[tuple[str, str]]) -> int:
    worst = 0
    for ns, name in key_of:
        lake = Lakehouse.open(url)
        nodes = lake.engine.nodes(lake.lakehouse_def().order)
        before = nodes.nodes_decoded
        lake.describe_table(ns, name)
        worst = max(worst, 1 + nodes.nodes_decoded - before)
    return worst


@pytest.fixture
def small_rebuild(monkeypatch):
    """A 2,000-message root takes the rebuild path (the default threshold is 50,000)."""
    monkeypatch.setattr(TreeWriter, "default_policy", FlushPolicy(rebuild_messages=1000))


def test_commits_after_a_bulk_load_stream_and_read_like_the_old_path(
    tmp_path, monkeypatch, small_rebuild
):
    n = 2000
    bulk_lake(tmp_path / "built", n)
    results = {}
    for path, columns_from in (("streamed", 256), ("decoded", 10**9)):
        monkeypatch.setattr(roots, "COLUMN_BUFFER_FROM", columns_from)
        url = str(tmp_path / path)
        shutil.copytree(tmp_path / "built", url)
        lake = Lakehouse.open(url)
        root = lake.engine.roots.load(1)
        assert isinstance(root.buffer, ColumnBuffer if path == "streamed" else MessageBuffer)
        lake.create_table("ns00", "after-bulk", {"table_format": "ICEBERG"})  # the rebuild
        lake.drop_table(NAMESPACES[3], spread(3))
        lake.create_table("ns01", "second", {"table_format": "ICEBERG"})
        lake.check()
        fresh = Lakehouse.open(url)  # nothing cached: everything read back from files
        versions = range(fresh.latest_version() + 1)
        results[path] = {
            "items": [dict(fresh.engine.snapshot(v).items()) for v in versions],
            "shape": [_tree_shape(fresh, v) for v in versions],
            "cold": _cold_lookup_files(
                url, [(NAMESPACES[i % 5], spread(i)) for i in range(0, n, 97)]
            ),
            "tables": [sorted(fresh.at(v).list_tables("ns00")) for v in versions[1:]],
        }
    streamed, decoded = results["streamed"], results["decoded"]
    assert streamed["shape"] == decoded["shape"]  # the same tree, node by node
    assert streamed["cold"] == decoded["cold"] <= 3
    assert streamed["tables"] == decoded["tables"]
    new_keys = set()
    for mine, theirs in zip(streamed["items"], decoded["items"], strict=True):
        assert mine.keys() == theirs.keys()
        differ = {k for k in mine if mine[k] != theirs[k]}
        new_keys |= differ
    # only the definitions the commits after the load wrote differ (new file names)
    assert len(new_keys) == 2
    assert all("after-bulk" in k or "second" in k for k in new_keys)
    assert len(streamed["items"][1]) == n + len(NAMESPACES)
    assert len(streamed["items"][2]) == n + len(NAMESPACES) + 1
    assert len(streamed["items"][3]) == n + len(NAMESPACES)


def test_a_commit_replacing_a_bulk_loaded_key_keeps_its_message_in_the_root(
    tmp_path, monkeypatch, small_rebuild
):
    monkeypatch.setattr(roots, "COLUMN_BUFFER_FROM", 256)
    bulk_lake(tmp_path / "lake", 1500)
    lake = Lakehouse.open(str(tmp_path / "lake"))
    assert isinstance(lake.engine.roots.load(1).buffer, ColumnBuffer)
    lake.drop_table(NAMESPACES[0], spread(0))  # the first commit: a message for a loaded key
    root = lake.engine.roots.load(2)
    assert [m[0] for m in root.buffer.values()] == [None]  # this commit's message only
    assert spread(0) not in set(lake.list_tables(NAMESPACES[0]))
    assert lake.describe_table(NAMESPACES[1], spread(1)) is not None
    lake.check()


# -- memory ---------------------------------------------------------------------------

PROBE = textwrap.dedent(
    """
    import json, sys, tempfile, tracemalloc
    from trinityfs import Lakehouse
    from trinityfs.storage.cache import ByteLRUCache
    from trinityfs.tree import TreeWriter
    from trinityfs.tree.budget import FlushPolicy
    import trinityfs.txn.roots as roots

    TreeWriter.default_policy = FlushPolicy(rebuild_messages=1000)
    roots.COLUMN_BUFFER_FROM = 1000
    with tempfile.TemporaryDirectory() as warm:  # imports and first-use caches: not measured
        w = Lakehouse.create(warm + "/w", storage_options={"fsync": False})
        with w.bulk_load() as load:
            load.create_namespace("ns00")
            for i in range(1200):
                load.create_table("ns00", f"t{i}", {"table_format": "ICEBERG"})
        Lakehouse.open(warm + "/w").create_table("ns00", "x")
    lake = Lakehouse.open(sys.argv[1], storage_options={"fsync": False})
    lake.storage.cache = ByteLRUCache(0)  # the bytes cache is bounded (256 MiB) anyway
    tracemalloc.start()
    lake.create_table("ns00", "after-bulk")
    print(json.dumps({"peak": tracemalloc.get_traced_memory()[1]}))
    """
)


def test_the_commit_after_a_bulk_load_holds_no_python_object_per_message(tmp_path):
    """Python heap at the peak of that commit, beyond the root file's own bytes (read
    whole): the old path decoded every message (~550 B each: 5.4 MB here)."""
    n = 10_000
    bulk_lake(tmp_path / "lake", n)
    root_bytes = max(
        os.path.getsize(tmp_path / "lake" / name)
        for name in os.listdir(tmp_path / "lake")
        if name.startswith("_") and name.endswith(".arrow")
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "lake")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    peak = json.loads(out.stdout.strip().splitlines()[-1])["peak"]
    beyond_file = peak - root_bytes
    assert beyond_file < 1_000_000, f"{beyond_file:,} B of Python objects for {n:,} messages"
